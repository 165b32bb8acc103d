# Two commands for a fresh machine with Python 3.11+ and make: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DB     ?= parity-demo.db
PORT   ?= 8501

.PHONY: demo test install bench mutate clean

# uv installs the same packages from the same registry in a quarter of pip's time (a fresh
# machine's install is most of `make demo`'s first two minutes); pip does it where uv
# cannot be had. uv, unlike pip, leaves the packages uncompiled, and where
# PYTHONDONTWRITEBYTECODE is set (this project's CI machines) every process then compiles
# pandas, SQLAlchemy and Streamlit from source: `--compile-bytecode` costs about 8 s once
# and saves about 3 s of every start (their imports: 4.9 -> 1.9 s). Parity's own modules
# are compiled beside them (an edited module is compiled again, as ever).
$(BIN)/parity: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	( $(BIN)/pip install --quiet uv \
	  && $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[test]' ) \
	|| ( $(BIN)/pip install --quiet --upgrade pip && $(BIN)/pip install --quiet -e '.[test]' )
	$(BIN)/python -m compileall -q db collectors dashboard runners parity >/dev/null
	@touch $@

install: $(BIN)/parity

## Build the demo store (when missing), print the parity summary and open the dashboard.
demo: install
	@if [ ! -f $(DB) ]; then $(BIN)/parity --db $(DB) demo; fi
	$(BIN)/parity --db $(DB) status
	$(BIN)/parity --db $(DB) summary
	$(BIN)/parity --db $(DB) serve --port $(PORT)

## Run the whole test suite (PostgreSQL tests run when PARITY_TEST_PG_URL is set).
test: install
	$(BIN)/python -m pytest

## Benchmarks print ratios against a floor measured in the same run.
bench: install
	$(BIN)/python benchmarks/ingest_junit.py
	$(BIN)/python benchmarks/detector.py
	$(BIN)/python benchmarks/views.py
	$(BIN)/python benchmarks/sync.py
	$(BIN)/python benchmarks/sync_buildkite.py
	$(BIN)/python benchmarks/report.py
	$(BIN)/python benchmarks/app.py

## Mutation testing of the modules that publish figures or hold secrets (tests/mutation/):
## about an hour on two cores, so not part of `make test`; figures in tests/mutation/RESULTS.md.
mutate: install
	$(BIN)/python tests/mutation/run.py

clean:
	rm -rf $(VENV) *.egg-info $(DB) $(DB)-wal $(DB)-shm
