# Two commands on a fresh machine (see README.md):
#   make reproduce   # install the pinned environment if needed, then run everything
#   make test        # install the pinned environment if needed, then run the tests
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
CORES ?= all
REQ := requirements

.PHONY: reproduce test test-full test-all lint env dev-env slurm-env crate-env mutation article-env lock

# The runtime: what the jobs import and Snakemake (requirements/runtime.lock). `make reproduce` needs
# no more. The project itself installs editable without dependencies: the lock holds them all.
env: $(VENV)/.installed

$(VENV)/.installed: $(REQ)/runtime.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r $(REQ)/runtime.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	touch $@

# Development on top of the runtime, in the same venv: tests, linters, mutation testing, the crate
# validator, uv for `make lock` (requirements/dev.lock).
dev-env: $(VENV)/.dev-installed

$(VENV)/.dev-installed: $(VENV)/.installed $(REQ)/dev.lock
	$(BIN)/pip install --quiet -r $(REQ)/runtime.lock -r $(REQ)/dev.lock
	$(BIN)/pip check
	touch $@

# Regenerate every lock from its .in file, with hashes (CONTRIBUTING.md, "Locks"). uv keeps the
# versions a lock already has; `make lock UPGRADE=--upgrade` takes the newest that the .in files allow.
# torch's CPU build comes from the local wheels of PIP_FIND_LINKS where set, else from PyTorch's
# CPU index.
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
LOCK_SOURCES ?= $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS),--extra-index-url $(TORCH_CPU_INDEX) --index-strategy unsafe-best-match)
COMPILE = cd $(REQ) && ../$(BIN)/uv pip compile --quiet --generate-hashes --python-version 3.11 \
	--custom-compile-command "make lock" $(LOCK_SOURCES) $(UPGRADE)

lock: $(VENV)/.dev-installed
	$(COMPILE) runtime.in -o runtime.lock
	$(COMPILE) dev.in -o dev.lock
	$(COMPILE) --no-deps slurm.in -o slurm.lock
	$(COMPILE) runcrate.in -o runcrate.lock
	$(COMPILE) runtime.in --override article.in -o article.lock

# The side environments (requirements/README.md says why each stays apart).
# .venv-slurm, the slurm profile's (docs/cluster.md): the SLURM plugin and its own Snakemake (for
# .venv-slurm/bin/snakemake), seeing .venv's packages through a .pth file (site.addsitedir, which
# also reads .venv's own .pth files: the editable attnrepro), so both run the same numpy and torch.
SLURM_VENV ?= .venv-slurm

slurm-env: $(SLURM_VENV)/.installed

$(SLURM_VENV)/.installed: $(VENV)/.installed $(REQ)/slurm.lock
	rm -rf $(SLURM_VENV)
	$(PYTHON) -m venv $(SLURM_VENV)
	$(SLURM_VENV)/bin/pip install --quiet --upgrade pip
	$(SLURM_VENV)/bin/pip uninstall --quiet --yes setuptools  # the venv's own, older than .venv's (pip check)
	$(BIN)/python -c "import site; print(f'import site; site.addsitedir({site.getsitepackages()[0]!r})')" \
	  > "$$($(SLURM_VENV)/bin/python -c 'import site; print(site.getsitepackages()[0])')/attnrepro-venv.pth"
	$(SLURM_VENV)/bin/pip install --quiet --no-deps --ignore-installed -r $(REQ)/slurm.lock
	$(SLURM_VENV)/bin/pip check
	touch $@

# .venv-runcrate: runcrate, the second reader of the archive's RO-Crate (tests/test_crate.py).
CRATE_VENV ?= .venv-runcrate

crate-env: $(CRATE_VENV)/.installed

$(CRATE_VENV)/.installed: $(REQ)/runcrate.lock
	$(PYTHON) -m venv $(CRATE_VENV)
	$(CRATE_VENV)/bin/pip install --quiet --upgrade pip
	$(CRATE_VENV)/bin/pip install --quiet -r $(REQ)/runcrate.lock
	$(CRATE_VENV)/bin/pip check
	touch $@

# .venv-article: the articles' stated environment (docs/evidence.md), the numerics sweep's side
# environment `article` (config numerics.environments; the rule numerics_environment_article runs
# this). The jobs import attnrepro from src/ (PYTHONPATH): no install of the package here.
ARTICLE_VENV ?= .venv-article

article-env: $(ARTICLE_VENV)/.installed

$(ARTICLE_VENV)/.installed: $(REQ)/article.lock
	$(PYTHON) -m venv $(ARTICLE_VENV)
	$(ARTICLE_VENV)/bin/pip install --quiet --upgrade pip
	$(ARTICLE_VENV)/bin/pip install --quiet -r $(REQ)/article.lock
	$(ARTICLE_VENV)/bin/pip check
	touch $@

# every guard module, or one: `make mutation MODULES=attnrepro.run.io`
mutation: $(VENV)/.dev-installed
	$(BIN)/python tests/mutation/run.py $(MODULES)

reproduce: $(VENV)/.installed
	$(BIN)/snakemake --workflow-profile workflow/profiles/default --cores $(CORES)

# The tests (CONTRIBUTING.md, "Tests"): `make test` the fast tier, `make test-full` the rest (the
# tests marked `full`), `make test-all` both in one session.
PYTEST = $(BIN)/python -m pytest -q --durations=15

test: $(VENV)/.dev-installed
	$(PYTEST) -m "not full" tests

test-full: $(VENV)/.dev-installed
	$(PYTEST) -m full tests

test-all: $(VENV)/.dev-installed
	$(PYTEST) tests

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests bench
	$(BIN)/lint-imports
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow
