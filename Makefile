# Kiln: the two set-up commands are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench venv clean config-sample check-config-sample

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
	@$(MAKE) --no-print-directory check-config-sample

# etc/kiln/kiln.conf.sample, written by oslo-config-generator from the options Kiln
# declares (kiln.cli.config:list_opts) and those of the libraries it configures.
# The generator finds them through stevedore, whose entry-point cache
# (~/.cache/python-entrypoints) can outlive a reinstall: each run gets a fresh one.
CONFIG_SAMPLE := etc/kiln/kiln.conf.sample
GENERATE_CONFIG := $(BIN)/oslo-config-generator --config-file etc/kiln/kiln-config-generator.conf

config-sample: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  XDG_CACHE_HOME="$$tmp" $(GENERATE_CONFIG) --output-file $(CONFIG_SAMPLE) 2>"$$tmp/log" || \
	  { cat "$$tmp/log" >&2; exit 1; }
	@echo "wrote $(CONFIG_SAMPLE)"

check-config-sample: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  { XDG_CACHE_HOME="$$tmp" $(GENERATE_CONFIG) --output-file "$$tmp/sample" 2>"$$tmp/log" || \
	    { cat "$$tmp/log" >&2; exit 1; }; } && \
	  { cmp -s "$$tmp/sample" $(CONFIG_SAMPLE) || \
	    { diff -u $(CONFIG_SAMPLE) "$$tmp/sample" | head -40 >&2; \
	      grep -h "Could not load" "$$tmp/log" >&2; \
	      echo "$(CONFIG_SAMPLE) is stale: run make config-sample" >&2; exit 1; }; }

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_template.py
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_api.py
	$(BIN)/python benchmarks/bench_cloud.py
	$(BIN)/python benchmarks/bench_scale.py

clean:
	rm -rf $(VENV) build src/*.egg-info
