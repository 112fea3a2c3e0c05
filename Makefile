# binlogkit — the README's first two commands are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
DEMO_SET := fixtures/mariadb-10.11

.PHONY: past-4g demo test deps deps-py deps-system fixtures soak bench-data bench bench-audit asan-rowtext asan-fastdecode clean help

help:
	@echo "make demo        decode committed fixtures made by a real MariaDB server"
	@echo "make test        install everything needed (venv, mariadb-server via apt as root), run the tests"
	@echo "make fixtures    rebuild every fixture set from real servers (needs mariadb-server, strace)"
	@echo "make bench-data  make the ~1 GB benchmark binlog in bench/data (not committed)"
	@echo "make bench       run the benchmarks"
	@echo "make asan-rowtext  the C row-text accelerator under AddressSanitizer + UBSan, fuzzed"
	@echo "make asan-fastdecode  the C decode/verify loop under AddressSanitizer + UBSan, against the Python path"
	@echo "make past-4g     a real > 4 GiB transaction: replicas killed in it, recovered, resumed (25 GB disk)"
	@echo "make soak        50 kill -9 trials, each repaired by binlogkit recover and compared (TRIALS=n)"

$(BIN)/.installed: pyproject.toml setup.py binlogkit/_rowtext.c binlogkit/_fastdecode.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,spark]'
	touch $@

deps-py: $(BIN)/.installed

deps-system:
	bash scripts/install-deps.sh

deps: deps-py deps-system

demo: deps-py
	@BINLOGKIT=$(BIN)/binlogkit bash scripts/demo.sh

test: deps
	$(BIN)/pytest -q

fixtures: deps
	$(PY) -m fixtures.lab build

soak: deps
	$(PY) -m fixtures.lab soak --trials $${TRIALS:-50}

bench-data: deps
	$(PY) -m fixtures.lab bench-data

bench: bench-data
	$(PY) bench/run.py

past-4g: deps
	$(PY) -m fixtures.lab.past4g

bench-audit: bench-data
	$(PY) bench/audit_archive.py --gb 20

clean:
	rm -rf build .pytest_cache .hypothesis

asan-rowtext: deps-py
	PY=$(PY) bash scripts/asan-rowtext.sh

asan-fastdecode: deps-py
	PY=$(PY) bash scripts/asan-fastdecode.sh
