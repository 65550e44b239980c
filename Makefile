# Two commands do everything: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv

# Each target installs what it needs, once: a stamp per set of extras, redone when
# pyproject.toml changes. uv installs them (pip install uv, then uv pip install ...): on this
# project's dependencies it is several times faster than pip. It compiles the bytecode once at
# install: otherwise, where it cannot be written (PYTHONDONTWRITEBYTECODE, a read-only venv),
# every process the tests start (kernels, servers, CLI runs) compiles its imports again.
DEMO    := $(VENV)/.installed-demo
DEV     := $(VENV)/.installed-dev
LAB     := $(VENV)/.installed-lab
APP     := $(VENV)/.installed-app
BROWSER := $(VENV)/.installed-browser
# The docs tools live in an environment of their own: mkdocs-jupyter brings jupytext, whose
# Jupyter server extension replaces the contents manager and bypasses genlab's pre-save hook
# (a saved Studio would lose its widgets: tests/test_jupyter_install.py fails beside it).
DOCS_VENV ?= .venv-docs
DOCS      := $(DOCS_VENV)/.installed-docs

.PHONY: demo lab app test test-browser docs lint typecheck pytest postgres bench reliability serve clean

$(UV):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv

$(DEMO): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e ".[emulator,notebook]"
	@touch $@

$(DEV): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e ".[dev]"
	@touch $@ $(DEMO)

$(LAB): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e ".[lab]"
	@touch $@

$(APP): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e ".[app]"
	@touch $@ $(DEMO)

$(BROWSER): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e ".[dev,browser]"
	@touch $@ $(DEV) $(DEMO)

$(DOCS): pyproject.toml | $(UV)
	@test -x $(DOCS_VENV)/bin/python || $(UV) venv --quiet --python $(PY) $(DOCS_VENV)
	$(UV) pip install --quiet --compile-bytecode --python $(DOCS_VENV)/bin/python -e ".[docs]"
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

clean:
	rm -rf $(VENV) $(DOCS_VENV) build .mypy_cache .pytest_cache .ruff_cache .hypothesis
