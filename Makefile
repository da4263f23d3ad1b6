# The rules database for Warhammer 40,000. `make help` lists the targets.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
RAW    ?= raw
DB     ?= db/wh40k.duckdb
CORPUS ?= ../shared/corpus
BIN     = $(VENV)/bin
export OPENBLAS_NUM_THREADS ?= 1
STAMP   = $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help venv build-db matchups test bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "  Variables: RAW=$(RAW) (raw snapshot folder), DB=$(DB) (database file), CORPUS=$(CORPUS) (mirror for the full data)"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m compileall -q pipeline schemas  # the project's bytecode, as pip writes it for an installed package
	@touch $(STAMP)

venv: $(STAMP) ## Create the virtual environment and install the project (done on first use)

build-db: $(STAMP) ## Fetch the full data from the corpus mirror (CORPUS) when it is there, build RAW into DB, show a first query
	@if [ -d "$(CORPUS)" ]; then \
		echo "full data: fetching from the corpus mirror $(CORPUS) into $(RAW)/"; \
		$(BIN)/wh40k fetch --raw $(RAW) --mirror $(CORPUS) --delay 0; \
	else \
		echo "no corpus at $(CORPUS): building the seed only (4 units; the README examples need the full data)."; \
		echo "  Fetch the sources with '$(BIN)/wh40k fetch' (or make build-db CORPUS=DIR for a mirror folder), then run make build-db again."; \
	fi
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
	rm -rf $(VENV) .pytest_cache .hypothesis db/*.duckdb db/*.tmp db/.*.tmp db/.*.attack.sqlite
