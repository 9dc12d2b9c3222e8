# Two commands do everything on a fresh machine: `make book` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup book test serve clean train bench lint

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

train: setup
	$(PY) -m lib.pretrained --train

book: setup
	$(VENV)/bin/jupyter-book build . --path-output _build -n -W --keep-going

test: setup
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check lib tests bench

serve: book
	$(PY) -m http.server --bind 127.0.0.1 --directory _build/html 8000

clean:
	rm -rf _build .pytest_cache .ruff_cache .hypothesis
