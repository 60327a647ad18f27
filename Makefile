# Two commands on a fresh machine (see README.md):
#   make reproduce   # install the pinned environment if needed, then run everything
#   make test        # install the pinned environment if needed, then run the tests
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
CORES ?= all

.PHONY: reproduce test lint env slurm-env crate-env mutation-env mutation article-env

env: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# The slurm profile's environment (README.md, "On a SLURM cluster"): the same lock plus
# requirements-slurm.lock, in a venv of its own. Never in .venv: with the SLURM plugin
# installed, every `snakemake` call first asks for a SLURM controller (~9 s where none answers).
SLURM_VENV ?= .venv-slurm

slurm-env: $(SLURM_VENV)/.installed

$(SLURM_VENV)/.installed: requirements.lock requirements-slurm.lock pyproject.toml
	$(PYTHON) -m venv $(SLURM_VENV)
	$(SLURM_VENV)/bin/pip install --quiet --upgrade pip
	$(SLURM_VENV)/bin/pip install --quiet -r requirements.lock -r requirements-slurm.lock
	$(SLURM_VENV)/bin/pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# runcrate, the second reader of the archive's RO-Crate (tests/test_crate.py runs `runcrate
# report`): a venv of its own from requirements-runcrate.lock, since runcrate pins networkx 3.1
# where requirements.lock (snakemake) has 3.6.1.
CRATE_VENV ?= .venv-runcrate

crate-env: $(CRATE_VENV)/.installed

$(CRATE_VENV)/.installed: requirements-runcrate.lock
	$(PYTHON) -m venv $(CRATE_VENV)
	$(CRATE_VENV)/bin/pip install --quiet --upgrade pip
	$(CRATE_VENV)/bin/pip install --quiet -r requirements-runcrate.lock
	touch $@

# The articles' stated environment (README.md, "Evidence"): the lock with requirements-article.lock's
# numpy and torch instead (NumPy 2.3.5, torch 2.12.0), in a venv of its own: the numerics sweep's
# side environment `article` (config numerics.environments; the rule numerics_environment_article
# runs this).
ARTICLE_VENV ?= .venv-article

article-env: $(ARTICLE_VENV)/.installed

$(ARTICLE_VENV)/.installed: requirements.lock requirements-article.lock pyproject.toml
	$(PYTHON) -m venv $(ARTICLE_VENV)
	$(ARTICLE_VENV)/bin/pip install --quiet --upgrade pip
	grep -v -E '^(numpy|torch)==' requirements.lock > $(ARTICLE_VENV)/requirements-lock-rest.txt
	$(ARTICLE_VENV)/bin/pip install --quiet -r $(ARTICLE_VENV)/requirements-lock-rest.txt -r requirements-article.lock
	touch $@  # the jobs import attnrepro from src/ (PYTHONPATH): no install of the package here

# Mutation testing of the guard modules (CONTRIBUTING.md, "Mutation testing"): mutmut in a venv
# of its own (requirements-mutation.lock on top of the lock, without the crate validator: it pins
# rich below 14, where mutmut's interface, textual, needs 14.2 or later).
MUTATION_VENV ?= .venv-mutation

mutation-env: $(MUTATION_VENV)/.installed

$(MUTATION_VENV)/.installed: requirements.lock requirements-mutation.lock pyproject.toml
	$(PYTHON) -m venv $(MUTATION_VENV)
	$(MUTATION_VENV)/bin/pip install --quiet --upgrade pip
	grep -v -E '^(rich|roc-validator)==' requirements.lock > $(MUTATION_VENV)/requirements-lock-rest.txt
	$(MUTATION_VENV)/bin/pip install --quiet -r $(MUTATION_VENV)/requirements-lock-rest.txt -r requirements-mutation.lock
	$(MUTATION_VENV)/bin/pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# every guard module, or one: `make mutation MODULES=attnrepro.io`
mutation: $(MUTATION_VENV)/.installed
	$(MUTATION_VENV)/bin/python tests/mutation/run.py $(MODULES)

reproduce: $(VENV)/.installed
	$(BIN)/snakemake --workflow-profile workflow/profiles/default --cores $(CORES)

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q --durations=15 tests

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow
