# Kiln: the two set-up commands are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench venv clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/kiln template validate examples/quickstart.yaml -e examples/quickstart-env.yaml
	BIN=$(BIN) bash scripts/run.sh

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_template.py
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_api.py
	$(BIN)/python benchmarks/bench_cloud.py --workers 128

clean:
	rm -rf $(VENV) build src/*.egg-info
