# Two commands do everything: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv

# Every target installs exactly the versions of uv.lock, the repository's lock (`make lock`
# writes it from pyproject.toml's ranges, `make upgrade` moves it to the newest releases). The
# wheel does not carry it: `pip install genlab` resolves from pyproject.toml's ranges, whose
# floors `make test-floors` tests.
#
# uv installs (pip installs uv first, at the version the lock holds: the dev extra's uv, so the
# uv that reads and writes uv.lock is the one make test installs). On this project's
# dependencies it is several times faster than pip. Each target installs what it needs, once: a
# stamp per set of extras, redone when pyproject.toml or uv.lock changes. `uv sync --inexact`
# adds a target's extras to .venv and removes nothing another target installed; genlab itself
# is installed editable. A lock that no longer matches pyproject.toml stops the install at once
# (checked offline) and names `make lock`. The bytecode is compiled once at install: otherwise,
# where it cannot be written (PYTHONDONTWRITEBYTECODE, a read-only venv), every process the
# tests start (kernels, servers, CLI runs) compiles its imports again.
UV_VERSION := $(shell sed -n '/^name = "uv"$$/{n;s/^version = "\(.*\)"$$/\1/p;q;}' uv.lock 2>/dev/null)
UV_STAMP   := $(VENV)/.uv-$(UV_VERSION)
SYNC    = @$(UV) lock --check --offline --quiet 2>/dev/null || { echo "uv.lock does not match" \
            "pyproject.toml: run \`make lock\` (uv lock), then commit uv.lock" >&2; exit 1; }; \
          echo "installing uv.lock's versions of genlab's $(1) extras into $(or $(2),$(VENV))"; \
          UV_PROJECT_ENVIRONMENT=$(abspath $(or $(2),$(VENV))) $(UV) sync --locked --inexact --quiet \
            --compile-bytecode $(foreach extra,$(1),--extra $(extra))
DEMO    := $(VENV)/.installed-demo
DEV     := $(VENV)/.installed-dev
LAB     := $(VENV)/.installed-lab
APP     := $(VENV)/.installed-app
BROWSER := $(VENV)/.installed-browser
# The docs tools live in an environment of their own, installed from the lock as well: the
# site's tools stay out of the one the tests and make lab use.
DOCS_VENV ?= .venv-docs
DOCS      := $(DOCS_VENV)/.installed-docs

.PHONY: demo lab app test test-browser docs lint typecheck pytest postgres bench reliability \
        serve clean lock upgrade binder test-floors test-latest

$(UV_STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet "uv$(if $(UV_VERSION),==$(UV_VERSION))"
	@rm -f $(VENV)/.uv-* && touch $@

$(DEMO): pyproject.toml uv.lock | $(UV_STAMP)
	$(call SYNC,emulator notebook)
	@touch $@

$(DEV): pyproject.toml uv.lock | $(UV_STAMP)
	$(call SYNC,dev)
	@touch $@ $(DEMO)

$(LAB): pyproject.toml uv.lock | $(UV_STAMP)
	$(call SYNC,lab)
	@touch $@

$(APP): pyproject.toml uv.lock | $(UV_STAMP)
	$(call SYNC,app)
	@touch $@ $(DEMO)

$(BROWSER): pyproject.toml uv.lock | $(UV_STAMP)
	$(call SYNC,dev browser)
	@touch $@ $(DEV) $(DEMO)

$(DOCS): pyproject.toml uv.lock | $(UV_STAMP)
	$(call SYNC,docs,$(DOCS_VENV))
	@touch $@

demo: $(DEMO)
	$(PY) -m genlab demo

# The notebooks in JupyterLab, on this machine only (127.0.0.1), opened at the quickstart;
# the same server serves Notebook 7 at /tree. Installs the notebook extra, JupyterLab and
# Notebook 7 into the venv first. Installing genlab turns on its Jupyter server extension and
# saving widget state in notebooks (the Studio and its results show again when a saved
# notebook is reopened; links in widgets open kept files): see genlab.jupyter.
lab: $(LAB)
	cd notebooks && $(abspath $(PY)) -m jupyterlab --ip=127.0.0.1 --ServerApp.root_dir=. \
	  $(if $(filter 0,$(shell id -u)),--allow-root) 01-quickstart.ipynb

# The Studio as a page of widgets without code (Voila), on 127.0.0.1: what a demo's audience sees.
app: $(APP)
	$(PY) -m genlab app

# lint and typecheck run alongside pytest, at a lower priority (they take the cores pytest leaves
# idle, e.g. while its workers start or while the last file finishes): their output is printed
# after pytest's, and make test fails when any of the three fails.
test: $(DEV) postgres
	@checks=$$(mktemp); \
	nice -n 10 $(MAKE) --no-print-directory -k lint typecheck >$$checks 2>&1 & pid=$$!; \
	$(MAKE) --no-print-directory pytest; tests=$$?; \
	wait $$pid; lint=$$?; \
	echo "--- make lint typecheck (run alongside pytest) ---"; cat $$checks; rm -f $$checks; \
	if [ $$lint -ne 0 ]; then echo "make test: lint or typecheck failed (above)"; fi; \
	[ $$lint -eq 0 ] && [ $$tests -eq 0 ]

lint: $(DEV)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/lint-imports --no-cache

typecheck: $(DEV)
	$(VENV)/bin/mypy

# One worker per core, each running whole files (their module-scoped servers are started
# once); nbval's notebooks run the same way. Bytecode is written even where
# PYTHONDONTWRITEBYTECODE is set: otherwise each worker rewrites the assertions of every test
# module again (seconds per worker) and each kernel, server and CLI run the tests start compiles
# this checkout's modules again; the caches are __pycache__ folders, which git ignores.
pytest: $(DEV) postgres
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n auto --dist loadfile

# PostgreSQL for the history's tests: Debian's package, installed (as root) when missing. The
# tests make a throwaway cluster on a free loopback port themselves and remove it afterwards.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo "installing Debian's postgresql"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      postgresql; } || echo "could not install postgresql (needs root and apt-get):" \
	      "the PostgreSQL tests will be skipped (outside CI)"; }

# The Studio in a real browser. Installs Debian's Chromium (as root, when missing) and
# Playwright; Playwright's own browser download is never used.
test-browser: $(BROWSER)
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	$(PY) -m pytest tests/browser -m browser -p no:cacheprovider

# The documentation site in build/docs/ (mkdocs.yml): the guide in docs/, the tutorial notebooks
# run against the embedded emulator in a temporary folder (docs/hooks.py), the API reference
# from the docstrings. Open build/docs/index.html from disk: it loads nothing from elsewhere.
docs: $(DOCS)
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --quiet

bench: $(DEV)
	$(PY) benchmarks/run.py

# The reliability suite at full size (soak, crash/resume, fuzz, load, bad media, secrets,
# escaping), then its table of figures, also written to docs/reliability.md. The table is
# printed even when a goal is missed; make test runs the same tests in a short form.
reliability: $(DEV)
	GENLAB_RELIABILITY=full $(PY) -m pytest tests/reliability -q -p no:cacheprovider; \
	  status=$$?; $(PY) -m tests.reliability.report; exit $$status

serve: $(DEMO)
	$(PY) -m genlab serve

# uv.lock again from pyproject.toml's ranges, keeping the locked versions that still fit (after
# a change to the dependencies), and binder/requirements.txt from it. Commit both.
lock: | $(UV_STAMP)
	$(UV) lock
	@$(MAKE) --no-print-directory binder

# Every locked package at its newest release: uv prints what moved (old -> new). Then the lock
# again with the uv it now holds, when uv itself moved (its format is that uv's), binder's
# requirements, and make test on the new versions.
upgrade: | $(UV_STAMP)
	@$(UV) lock --upgrade 2>$(VENV)/upgrade.log || { cat $(VENV)/upgrade.log >&2; exit 1; }
	@moved=$$(grep -E '^(Updated|Added|Removed) ' $(VENV)/upgrade.log); \
	echo "uv.lock upgraded; what moved (old -> new):"; echo "$${moved:-nothing, all at their newest}"
	@$(MAKE) --no-print-directory lock
	@$(MAKE) --no-print-directory test

# Binder installs from binder/requirements.txt, exported from the lock: the app and lab extras
# (the emulator, the notebooks, Voila, JupyterLab and Notebook 7) at their locked versions, and
# genlab itself from the repository's root, not editable. tests/test_lock.py checks it is
# the lock's export.
BINDER_EXPORT := export --locked --offline --no-hashes --no-annotate --no-editable \
                 --extra app --extra lab
binder: | $(UV_STAMP)
	@{ echo "# Generated from uv.lock by \`make binder\` (make lock and make upgrade run it): do not edit."; \
	  echo "# repo2docker installs it from the repository's root: genlab itself (the \`.\` line) and,"; \
	  echo "# at the lock's versions, what its app and lab extras bring: the emulator and the notebooks'"; \
	  echo "# packages (every notebook runs offline against the embedded emulator), Voila for the Studio"; \
	  echo "# as an app (/voila/render/notebooks/app/studio.ipynb), JupyterLab and Notebook 7. A team's"; \
	  echo "# PostgreSQL and object-storage drivers are left out: Binder needs neither."; \
	  $(UV) $(BINDER_EXPORT); } > binder/requirements.txt.new
	@mv binder/requirements.txt.new binder/requirements.txt
	@echo "binder/requirements.txt: exported from uv.lock"

# pyproject.toml's ranges, honestly: the test suite (as make pytest runs it, browser tests
# aside) in a venv of its own with every direct dependency at the lowest version pyproject.toml
# allows (lowest-direct: what those need, at its newest). Each floor raised because of it says
# why beside it in pyproject.toml.
FLOORS := .venv-floors
$(FLOORS)/.installed: pyproject.toml | $(UV_STAMP)
	rm -rf $(FLOORS)
	$(UV) venv --quiet --python $(PYTHON) $(FLOORS)
	$(UV) pip install --quiet --compile-bytecode --python $(FLOORS)/bin/python \
	  --resolution lowest-direct -e ".[dev]"
	@touch $@

test-floors: $(FLOORS)/.installed postgres
	PYTHONDONTWRITEBYTECODE= $(FLOORS)/bin/python -m pytest -n auto --dist loadfile

# Today's newest releases of everything, without the lock, in a venv of its own made again
# each run: what make upgrade would bring, as named failures before anyone upgrades. Lint and
# mypy run too (newer stubs and type hints break mypy first, as stamina 26.2 did).
LATEST := .venv-latest
test-latest: postgres | $(UV_STAMP)
	rm -rf $(LATEST)
	$(UV) venv --quiet --python $(PYTHON) $(LATEST)
	$(UV) pip install --quiet --compile-bytecode --python $(LATEST)/bin/python \
	  --resolution highest -e ".[dev]"
	@failed=; \
	$(LATEST)/bin/ruff check src tests benchmarks || failed="$$failed ruff"; \
	$(LATEST)/bin/lint-imports --no-cache || failed="$$failed lint-imports"; \
	$(LATEST)/bin/mypy || failed="$$failed mypy"; \
	PYTHONDONTWRITEBYTECODE= $(LATEST)/bin/python -m pytest -n auto --dist loadfile \
	  || failed="$$failed pytest"; \
	if [ -n "$$failed" ]; then echo "make test-latest: failed with today's releases:$$failed"; \
	  exit 1; fi

clean:
	rm -rf $(VENV) $(DOCS_VENV) $(FLOORS) $(LATEST) build .mypy_cache .pytest_cache .ruff_cache \
	  .hypothesis
