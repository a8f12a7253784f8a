# voxcall — the README's commands. `make test` installs what it needs first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export HF_HUB_OFFLINE := 1

.PHONY: install test lint typecheck bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: install
	$(BIN)/ruff check src tests benchmarks

typecheck: install
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

bench: install
	$(BIN)/python benchmarks/bench_codecalls.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
