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

# The slurm profile's environment (docs/cluster.md): .venv's packages plus
# requirements-slurm.lock, in a venv of its own. Never in .venv: with the SLURM plugin
# installed, every `snakemake` call first asks for a SLURM controller (~9 s where none answers).
# It sees .venv's packages through a .pth file (site.addsitedir, which also reads .venv's own
# .pth files: the editable attnrepro), so both run the same installed numpy and torch, and it
# installs only the plugins and its own copy of snakemake (for .venv-slurm/bin/snakemake):
# 2 minutes and 1.5 GB less than a second install of the lock.
SLURM_VENV ?= .venv-slurm

slurm-env: $(SLURM_VENV)/.installed

$(SLURM_VENV)/.installed: $(VENV)/.installed requirements-slurm.lock
	rm -rf $(SLURM_VENV)
	$(PYTHON) -m venv $(SLURM_VENV)
	$(SLURM_VENV)/bin/pip install --quiet --upgrade pip
	$(SLURM_VENV)/bin/pip uninstall --quiet --yes setuptools  # the venv's own, older than .venv's (pip check)
	$(BIN)/python -c "import site; print(f'import site; site.addsitedir({site.getsitepackages()[0]!r})')" \
	  > "$$($(SLURM_VENV)/bin/python -c 'import site; print(site.getsitepackages()[0])')/attnrepro-venv.pth"
	$(SLURM_VENV)/bin/pip install --quiet --no-deps --ignore-installed $$(grep -E '^snakemake==' requirements.lock)
	$(SLURM_VENV)/bin/pip install --quiet -r requirements-slurm.lock
	$(SLURM_VENV)/bin/pip check
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

# The articles' stated environment (docs/evidence.md): the lock with requirements-article.lock's
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

# Mutation testing of the guard modules (CONTRIBUTING.md, "Mutation testing of the guards"): mutmut in a venv
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

# every guard module, or one: `make mutation MODULES=attnrepro.run.io`
mutation: $(MUTATION_VENV)/.installed
	$(MUTATION_VENV)/bin/python tests/mutation/run.py $(MODULES)

reproduce: $(VENV)/.installed
	$(BIN)/snakemake --workflow-profile workflow/profiles/default --cores $(CORES)

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q --durations=15 tests

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests bench
	$(BIN)/lint-imports
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow
