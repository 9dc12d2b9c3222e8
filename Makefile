# Two commands do everything on a fresh machine: `make book` and `make test` (CI runs `make lint`
# too). Every target:
#
#   make book       create .venv, install everything, get the reference model and the attention
#                   chapter's copies, export the Playground's, build the website strictly into
#                   _build/html
#   make test       the same setup, Chromium if missing, the website if stale, the release and the
#                   reader notebooks, then the test suite (which includes tests/test_colab.py,
#                   `make colab-test` below)
#   make test-fast  what to run while changing code: the tests that need no website, no browser
#                   and no trained model (pytest -m "not browser and not slow"), after `make
#                   setup` alone; a few minutes on 2 cores
#   make colab-test only the Colab-like test: every chapter in a fresh environment shaped like
#                   Colab's, after the chapters' own setup cell installed `lib` (the time of each
#                   step goes to _build/colab-env/timings.json)
#   make serve      show the built website on http://127.0.0.1:$(PORT)
#   make lint       ruff on the Python code and the chapters, ESLint on the JavaScript, actionlint
#                   on the workflows (CI runs it beside `make test`: pytest does not lint)
#   make bench      run the benchmarks, write BENCHMARKS.md (BENCH_SKIP_COLD=1: no cold build)
#   make clean      remove build outputs and caches (make distclean: also .venv and node_modules)
#
# The steps they are made of, each a target of its own:
#
#   make setup      .venv with requirements.txt and `lib` (editable), and the npm packages
#   make chromium   Debian's Chromium and a CJK font for the browser tests, if missing
#   make reference  the reference model for the current key: cached, downloaded or trained
#   make chapter-models
#                   the attention chapter's two models: cached, downloaded or trained
#   make train      train the reference model again, whatever is cached
#   make playground the Playground's models: the reference model (and the attention chapter's
#                   copy, when cached) exported to ONNX
#   make release    the reference checkpoint and the attention chapter's runs, with their
#                   manifests, ready to publish
#   make notebooks  the reader notebooks for Colab and Jupyter, from the built website
#   make publish-release, make publish-notebooks
#                   what the deployment workflow publishes (.github/workflows/deploy.yml)
#
# The tools in scripts/ and bench/ are packages, run from this directory as modules
# (`python -m scripts.toc --lint`, `python -m bench.run_all`).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed
SITE := _build/html
# Touched after every successful strict build: `make test` rebuilds only when an input is newer.
# The inputs are what the build reads and executes: every chapter imports `lib`, so any file of
# lib/ may change what a page shows, and all of it is an input. tests/ is not: a change to the
# tests alone reruns them against the website already built. `make test-fast` needs no website.
SITE_STAMP := _build/.site-built
SITE_INPUTS := _config.yml _toc.yml package-lock.json $(STAMP) \
	$(shell find book lib scripts web -type f -not -path '*/__pycache__/*' \
	        -not -path '*/.ipynb_checkpoints/*' -not -name '*.pyc' 2>/dev/null)
PORT ?= 8000
# apt-get needs root: use sudo when we are not root.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends

.PHONY: setup book test test-fast colab-test serve clean distclean train reference bench lint \
	chromium playground release notebooks publish-release publish-notebooks chapter-models

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install --no-deps -e .
	touch $(STAMP)

# MathJax, RequireJS and the Jupyter widget manager, served by the website itself (package.json).
$(NPM_STAMP): package.json package-lock.json
	command -v npm >/dev/null || { $(SUDO) apt-get update && $(APT_INSTALL) nodejs npm; }
	npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

setup: $(STAMP) $(NPM_STAMP)

# A Chromium-family browser for the browser tests (never `playwright install`): they use
# $CHROMIUM, else Google Chrome, else Debian's chromium (tests/conftest.py, chromium_path), so
# Debian's package is installed only when none of them is there (GitHub's Ubuntu runners ship
# Chrome, and Ubuntu has no `chromium` package but a snap stub). And a small CJK font, so the
# screenshots show the introduction's Chinese example as readers see it.
chromium:
	@missing=; \
	[ -n "$$CHROMIUM" ] || command -v google-chrome >/dev/null || \
	  command -v google-chrome-stable >/dev/null || command -v chromium >/dev/null || \
	  missing=chromium; \
	fc-list :lang=zh 2>/dev/null | grep -q . || missing="$$missing fonts-wqy-microhei"; \
	[ -z "$$missing" ] || { $(SUDO) apt-get update && $(APT_INSTALL) $$missing; }

train: setup
	$(PY) -m lib.course.reference --train

# The chapters load the reference model: when none with the current config, corpus and training
# code is cached, download the one published for that key, else train it (the checkpoint
# records how long that took; BENCHMARKS.md times a cold build with it).
reference: setup
	$(PY) -m lib.course.reference --ensure

# The attention chapter's runs (lib/course/release.py CHAPTER_RUNS), like the reference model:
# cached, else downloaded from their release, else trained here (side by side), before
# the site is built, so that the chapter reads them instead of computing them in the page.
chapter-models: setup
	$(PY) -m lib.course.release --prepare-runs

# The Playground page's model: the reference model exported to ONNX (int8 weights) with its
# vocabularies, in _build/playground/<key>/ (lib/course/playground.py). The key hashes the reference
# model's cache key and EXPORT_VERSION, so a changed model is exported again; when nothing
# changed this only checks the key. The attention chapter's attention model goes into <key>/attention/
# (`make chapter-models` caches it first; the site build also exports it at its end, should the
# cache have lost it: scripts/playground_site.py).
playground: setup reference chapter-models
	$(PY) -m lib.course.playground --out _build/playground

# The published reference checkpoint for the current cache key, with its manifest (key, sha256,
# bytes, held-out BLEU, lib version), in _build/release/ (lib/course/release.py); beside it, a
# folder per release of the attention chapter's runs (result, weights, manifest:
# lib/course/chapter_models.py), as the site build cached them (downloaded, else trained here
# when they are not cached).
release: setup reference
	$(PY) -m lib.course.release --out _build/release

# Reader notebooks for Colab and Jupyter, generated from the chapters and the executed build
# (scripts/reader/), in _build/notebooks/.
notebooks: $(SITE_STAMP)
	$(PY) -m scripts.reader_notebooks --out _build/notebooks

# Continuous delivery (.github/workflows/): each step of the workflow is one of these targets.
publish-release: release
	$(PY) -m scripts.publish release _build/release

publish-notebooks: notebooks
	$(PY) -m scripts.publish notebooks _build/notebooks

# Always a full, fresh, strict build: every notebook runs against the current lib/, and a
# failing cell, a warning or a broken reference fails it (-n -W --keep-going, --all).
define build_site
	rm -rf $(SITE_STAMP) $(SITE)
	$(VENV)/bin/jupyter-book build . --all -n -W --keep-going
	touch $(SITE_STAMP)
endef

book: setup reference playground
	$(build_site)

$(SITE_STAMP): $(NPM_STAMP) $(SITE_INPUTS) | reference playground
	$(build_site)

# pytest collects tests/test_colab.py too: `make test` runs the Colab-like test as well. Two
# processes (pytest-xdist), each given whole files: most of the slow tests wait on a browser, a
# kernel or a server, so two of them share two cores well.
test: setup chromium playground $(SITE_STAMP) release notebooks
	COURSE_REQUIRE_SITE=1 $(PY) -m pytest -q -n 2 --dist loadfile --durations=20

# The tests marked neither `browser` nor `slow` (pyproject.toml): no website, no Chromium, no
# reference model, so nothing but the environment is built first. tests/conftest.py marks a
# test `slow` when it asks for the built website, and `browser` when it asks for Chromium.
test-fast: setup
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not browser and not slow"

# A cold start as in Colab: a new virtual environment under _build/colab-env/ with Colab's torch,
# numpy, ipywidgets 7.7.1 (not requirements.txt), each reader notebook's setup cell run against a
# local copy of this repository, the release served on 127.0.0.1, an empty HOME per notebook;
# the time of each step goes to timings.json there.
colab-test: setup release notebooks
	COURSE_REQUIRE_SITE=1 $(PY) -m pytest tests/test_colab.py -v --durations=0

# Benchmarks against JoeyNMT 2.3.0 (own venv under _build/bench), the BLEU implementations, the
# matmul peak and the book build; writes BENCHMARKS.md, which says how long the run took. The
# cold book build (training the reference model into an empty cache) and the two capped
# time-to-BLEU runs take most of it: BENCH_SKIP_COLD=1 skips the cold build, and BENCHMARKS.md
# then says "not measured in this run". BENCH_QUICK=1: short caps, only to check the harness.
# BENCH_TRAIN_MINUTES: the cap of each time-to-BLEU run (bench/run_all.py's --train-minutes).
BENCH_SKIP_COLD ?=
BENCH_QUICK ?=
BENCH_TRAIN_MINUTES ?=
bench: setup
	$(PY) -m bench.run_all $(if $(BENCH_SKIP_COLD),--skip-cold) $(if $(BENCH_QUICK),--quick) \
	  $(if $(BENCH_TRAIN_MINUTES),--train-minutes $(BENCH_TRAIN_MINUTES))

# ruff reads no MyST Markdown: scripts.toc --lint hands it the chapters' code as notebooks.
# ESLint (package.json, eslint.config.mjs) checks the widgets' JavaScript (lib/widgets/static/),
# actionlint (requirements.txt) the GitHub workflows.
lint: setup
	$(VENV)/bin/ruff check lib tests bench scripts
	$(PY) -m scripts.toc --lint
	node_modules/.bin/eslint .
	$(VENV)/bin/actionlint -no-color -oneline .github/workflows/*.yml

serve: $(SITE_STAMP)
	@echo "Serving $(SITE) on http://127.0.0.1:$(PORT)/ (Ctrl-C to stop)"
	$(PY) -m http.server --bind 127.0.0.1 --directory $(SITE) $(PORT)

clean:
	rm -rf _build .pytest_cache .ruff_cache .hypothesis

distclean: clean
	rm -rf $(VENV) node_modules
