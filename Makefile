# The rules database for Warhammer 40,000. `make help` lists the targets.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
RAW    ?= raw
DB     ?= db/wh40k.duckdb
BIN     = $(VENV)/bin
export OPENBLAS_NUM_THREADS ?= 1
STAMP   = $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help venv build-db matchups test bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "  Variables: RAW=$(RAW) (raw snapshot folder), DB=$(DB) (database file)"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP) ## Create the virtual environment and install the project (done on first use)

build-db: $(STAMP) ## Build the database from $(RAW) into $(DB), then show a first query
	$(BIN)/wh40k build --raw $(RAW) --db $(DB)
	$(BIN)/wh40k sql --db $(DB) "SELECT d.name, d.starting_strength AS models, count(w.weapon_name) AS weapon_profiles FROM datasheets d LEFT JOIN weapon_profiles w USING (datasheet_id) GROUP BY ALL ORDER BY d.name LIMIT 20"

matchups: $(STAMP) ## Fill the matchups tables of $(DB): every weapon profile against every target
	$(BIN)/wh40k matchups --db $(DB)

test: $(STAMP) ## Run the tests (unit, golden files, properties, end to end)
	$(BIN)/python -m pytest tests pipeline schemas

bench: $(STAMP) ## Print speed figures (engine, build) with ratios against a reference
	$(BIN)/python benchmarks/bench_engine.py $(DB)
	$(BIN)/python benchmarks/bench_batch.py $(DB)
	$(BIN)/python benchmarks/bench_build.py
	$(BIN)/python benchmarks/bench_service.py $(DB)
	$(BIN)/python benchmarks/bench_cli.py $(DB)

clean: ## Remove the virtual environment, caches and built databases
	rm -rf $(VENV) .pytest_cache .hypothesis db/*.duckdb db/*.tmp db/.*.tmp
