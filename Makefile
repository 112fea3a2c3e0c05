# binlogkit — the README's first two commands are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
DEMO_SET := fixtures/mariadb-10.11

.PHONY: docs serve-proof bench-serve bench-serve-apply spark-proof spark-mirror-kill bench-spark bench-spark-changes bench-spark-first bench-spark-sizing replay-proof mysql-partial lab-chroots bench-export export-proof bench-pull bench-pull-mysql pull-soak past-4g demo test typecheck fuzz deps deps-py deps-system fixtures soak bench-data bench bench-encryption fuzz-encryption bench-audit bench-pitr bench-s3 report-screenshot asan-rowtext asan-rowarrow asan-fastdecode asan-pullscan c-constants lean-cli arch-counts bench-ab clean help lake-proof lake-follow-soak bench-follow bench-mirror verbose-proof asan-eventcols

help:
	@echo "make demo        decode committed fixtures made by a real MariaDB server"
	@echo "make test        install everything needed (venv, mariadb-server via apt as root), run the tests"
	@echo "make fixtures    rebuild every fixture set from real servers (needs mariadb-server, strace, the lab chroots)"
	@echo "make lab-chroots build the Debian sid chroots of MySQL 9.7 and MariaDB 11.8 for the lab (root; cached)"
	@echo "make bench-data  make the ~1 GB benchmark binlog in bench/data (not committed)"
	@echo "make bench       run the benchmarks"
	@echo "make bench-export  binlogkit export to Parquet vs mariadb-binlog -v on the bench binlog; the Spark job on 2 workers"
	@echo "make replay-proof  the replay-equality campaign: every kind, server tool and binlogkit, encrypted, .xz, s3://"
	@echo "make verbose-proof decode -v / -vv / --json -v through the C loop vs the Python reference: every fixture and corpus file, three zones"
	@echo "make lake-proof    kill -9 trials of the Iceberg and Delta mirrors (TRIALS=10 each)"
	@echo "make bench-follow  export --follow of a lab primary at 5,000 row changes/s: lag p50/p99, CPU per row vs a plain export (RATE=, DURATION=)"
	@echo "make lake-follow-soak  export --follow on a pulled folder under load, kill -9 at random points (TRIALS=20 per flavor; the suite does 3); pull's connection cut and the primary restarted (FAULTS=5 rounds; the suite does 1); the archive then live; a failover to a GTID replica (FAILOVER_SECONDS=15 of writes per primary; the suite 3)"
	@echo "make spark-mirror-kill  kill -9 of the Spark mirror backfill's driver at table commits, then a rerun: equal to the local mirror"
	@echo "make bench-mirror   rows/s and peak RSS of building a mirror from the bench binlog; local vs Spark backfill wall time (SPARK_MASTER=)"
	@echo "make export-proof  the export replay proof with a 25 MB transaction (CI runs it with 3 MB)"
	@echo "make spark-proof   spark.read.format(\"binlog\"): every table on the standalone cluster, local and s3://, plain and encrypted, events too"
	@echo "make bench-spark   the binlog data source (changes, events) on 2 workers vs the local export and decode, rows/s and MB/s"
	@echo "make bench-spark-changes  the data source's typed and long changes vs binlogkit export on the bench binlog, CPU, back to back; the rows compared too"
	@echo "make bench-spark-first  Spark's fixed cost: a fresh local[2] session per table, the first and a warm count() of the lab archive, against a one-row Python source"
	@echo "make bench-spark-sizing  docs/spark.md's sizing: CPU per table on the bench binlog, the driver's planning of 10,000 files"
	@echo "make bench-pull  binlogkit pull vs mariadb-binlog --read-from-remote-server --raw on the bench binlog (CPU ratio vs the 1.2x goal; PULL_FILE=other binlog, REPEAT=5)"
	@echo "make bench-pull-mysql  the same against the lab's MySQL 9.7 (its own ~200 MB binlog, MB=) vs mysqlbinlog --raw"
	@echo "make bench-encryption  verify/decode of encrypted copies of the bench binlog vs plain"
	@echo "make fuzz-encryption   5 minutes of damaged encrypted files: typed errors only"
	@echo "make bench-audit audit throughput (20 GB), peak RSS (100 GB of symlinks), merge of 100,000 summaries"
	@echo "make bench-s3    audit over S3 (SeaweedFS on loopback) vs the same files on local disk: MB/s both, ratio"
	@echo "make bench-pitr  pitr planning time and peak RSS on generated archives of 50 and 400 files"
	@echo "make bench-ab BASE=rev  this tree vs a base revision: verify, decode, transactions, audit, export timed interleaved (MB=, RUNS=)"
	@echo "make arch-counts the layering counts (docs/architecture.md) for this tree, beside docs/architecture-counts-before.json"
	@echo "make report-screenshot  docs/report.png: the faulty archive's HTML report in headless Chromium"
	@echo "make asan-rowtext  the C row-text accelerator under AddressSanitizer + UBSan, fuzzed"
	@echo "make fuzz        mutation campaign over every file-facing command (FUZZ_MINUTES=5, FUZZ_ENGINE=plain|atheris)"
	@echo "make docs        the documentation site into site/ (mkdocs; make test builds it)"
	@echo "make typecheck   mypy on binlogkit/ (make test runs it)"
	@echo "make c-constants write binlogkit/_constants.h (the C files' type codes) from binlogkit/constants.py"
	@echo "make lean-cli    write binlogkit/cli/pull_options.py (pull's options for its click-free start, cli/entry.py) from cli/pull.py"
	@echo "make asan-rowarrow  export's C Arrow path under AddressSanitizer + UBSan, against the Python path, fuzzed"
	@echo "make asan-fastdecode  the C decode/verify loop under AddressSanitizer + UBSan, against the Python path"
	@echo "make asan-pullscan    pull's C receiver loop under AddressSanitizer + UBSan, against the Python path"
	@echo "make asan-eventcols   the Spark source's C columns and transaction run under AddressSanitizer + UBSan, against the Python path, fuzzed"
	@echo "make past-4g     a real > 4 GiB transaction: replicas killed in it, recovered, resumed (25 GB disk)"
	@echo "make soak        50 kill -9 trials spread over the workload, every 5th with 300 MB of relay logs on disk (KIND=mysql-9.7|mariadb-11.8, TRIALS, SEED, LATE_EVERY, LATE_MB)"
	@echo "make mysql-partial  MySQL 9.7 replicas killed -9 (or IO thread stopped) inside a transaction, both modes, vs the primary (TRIALS=20)"
	@echo "make serve-proof binlogkit serve with real replicas: MariaDB 10.11/11.8 and MySQL 9.7, GTID and file/position, encrypted, a live pull folder, kill -9"
	@echo "make bench-serve-apply  a parallel replica rebuilt from a dump catching up through serve vs binlogkit decode | mysql of the same range (KIND=mysql-9.7, TRX=20000)"
	@echo "make bench-serve a replica's IO thread fetching the bench binlog from serve vs from a real primary (goal: at most 1.2x; REPEAT=3)"
	@echo "make pull-soak   30 kill -9 trials of binlogkit pull under a live workload, then cmp with the primary (TRIALS=n, KIND=mysql-9.7)"

SOURCES := pyproject.toml setup.py binlogkit/_rowtext.c binlogkit/_rowarrow.c binlogkit/_eventcols.c binlogkit/_fastdecode.c binlogkit/_pullscan.c binlogkit/_out.h binlogkit/_rowimage.h binlogkit/_constants.h

# what `make demo` needs: binlogkit itself (its C accelerators built), no extras
$(BIN)/.installed-demo: $(SOURCES)
	$(PYTHON) -m venv $(VENV)
	@# quiet unless it fails: the build backend's chatter goes to a log shown on failure
	@$(BIN)/pip install -q -e . > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@echo "installed binlogkit in $(VENV) (log: $(VENV)/install.log)"
	@$(PY) -c 'import binlogkit._rowtext' 2>/dev/null || echo "note: the C accelerator was not built (no C compiler or Python headers: apt-get install gcc python3-dev, then make deps-py); binlogkit uses its pure-Python row decoder (same output, slower)"
	touch $@

# everything the tests use: the test, spark and export extras on top (pyproject.toml's lists,
# installed as requirements: binlogkit itself is not built a second time)
$(BIN)/.installed: $(BIN)/.installed-demo
	@$(BIN)/pip install -q --upgrade pip >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@$(PY) -c 'import tomllib; x = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]; print("\n".join(x["test"] + x["spark"] + x["export"] + x["lake"] + x["docs"]))' > $(VENV)/extras.txt
	@$(BIN)/pip install -q -r $(VENV)/extras.txt >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@echo "installed the test/spark/export/lake/docs extras in $(VENV) (log: $(VENV)/install.log)"
	touch $@

deps-py: $(BIN)/.installed

deps-system:
	bash scripts/install-deps.sh
	@# today's servers for the lab (MySQL 9.7, MariaDB 11.8): Debian sid chroots, cached; root only
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory lab-chroots; \
	else echo "deps: not root: the MySQL 9.7 / MariaDB 11.8 lab chroots are not built (make lab-chroots as root); their tests skip"; fi

lab-chroots:
	@bash scripts/lab-chroot.sh mysql-9.7
	@bash scripts/lab-chroot.sh mariadb-11.8

deps: deps-py deps-system

demo: $(BIN)/.installed-demo
	@BINLOGKIT=$(BIN)/binlogkit bash scripts/demo.sh

# the suite runs in TEST_WORKERS processes (pytest-xdist), whole files per worker: each worker
# starts its own lab servers on free ports, and fixture sets are materialised under a lock
TEST_WORKERS ?= 2
test: deps typecheck docs
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile

typecheck: deps-py
	$(BIN)/mypy

# the documentation site (mkdocs, material theme) into site/, offline, strict: a broken internal
# link or anchor, or a nav entry without its page, fails; the command and Python API reference
# pages are made from the code as it builds (scripts/doc_reference.py). A few seconds.
docs: deps-py
	@NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict
	@echo "docs: site/index.html (open it, or $(PY) -m mkdocs serve)"

# the C accelerators' event, flag and column type codes, from binlogkit/constants.py (tests/test_c_constants.py
# fails when the header is stale); rebuild the accelerators after it changes (make deps-py)
c-constants:
	$(PYTHON) scripts/gen_c_constants.py

lean-cli:
	$(PYTHON) -m binlogkit.cli.entry --write

FUZZ_MINUTES ?= 5
FUZZ_ENGINE ?= plain
FUZZ_OUT ?= fuzz-out
fuzz: deps-py
	@# atheris (coverage-guided) when it installs for this Python; else the plain mutation engine
	@if [ "$(FUZZ_ENGINE)" = atheris ]; then \
	  $(BIN)/pip install -q 'atheris>=2.3' > /dev/null 2>&1 || { echo "atheris does not install here: FUZZ_ENGINE=plain"; exit 2; }; \
	  $(PY) -m fuzz atheris-all --minutes $(FUZZ_MINUTES) --out $(FUZZ_OUT); \
	else \
	  nice -n 19 $(PY) -m fuzz run --minutes $(FUZZ_MINUTES) --out $(FUZZ_OUT); \
	fi

fixtures: deps
	$(PY) -m fixtures.lab build
	$(PY) -m fixtures.lab build --kind mysql-9.7
	$(PY) -m fixtures.lab build --kind mariadb-11.8

mysql-partial: deps
	nice -n 19 $(PY) -m fixtures.lab.partial_campaign --trials $${TRIALS:-20} --seed $${SEED:-1}

soak: deps
	nice -n 19 $(PY) -m fixtures.lab soak --kind $${KIND:-mariadb-10.11} --trials $${TRIALS:-50} --seed $${SEED:-1} --late-every $${LATE_EVERY:-5} --late-mb $${LATE_MB:-300}

bench-data: deps
	$(PY) -m fixtures.lab bench-data

bench: bench-data
	$(PY) bench/run.py
	$(PY) bench/encryption.py
	$(PY) bench/s3.py
	$(PY) bench/export.py
	$(PY) bench/pull.py --repeat 3

bench-export: bench-data
	$(PY) bench/export.py

verbose-proof: deps-py
	BINLOGKIT_PROOF=all nice -n 10 $(PY) -m pytest -q -p no:cacheprovider tests/test_fastdecode_replay.py tests/test_jsonrows.py -k "verbose or jsonrows"

replay-proof: deps
	nice -n 19 $(PY) -m fixtures.lab.replay_campaign --small $${SMALL:-2000} --big-mb $${BIG_MB:-8} $${KIND:+--kind $$KIND}

lake-proof: deps
	LAKE_KILL_TRIALS=$${TRIALS:-10} nice -n 10 $(BIN)/pytest -q tests/test_lake.py -k kill_minus_9

spark-mirror-kill: deps
	nice -n 10 $(PY) scripts/spark_mirror_kill.py --format iceberg c1 c5 c13 --rerun spark
	nice -n 10 $(PY) scripts/spark_mirror_kill.py --format delta c1 c5 c13

lake-follow-soak: deps
	LAKE_FOLLOW_KILLS=$${TRIALS:-20} LAKE_FOLLOW_FAULTS=$${FAULTS:-5} nice -n 10 $(BIN)/pytest -q tests/test_lake_follow.py tests/test_lake_follow_faults.py tests/test_lake_follow_archive.py
	LAKE_FOLLOW_FAILOVER_SECONDS=$${FAILOVER_SECONDS:-15} nice -n 10 $(BIN)/pytest -q tests/test_lake_follow_failover.py

bench-follow: deps
	nice -n 10 $(PY) bench/follow.py --rate $${RATE:-5000} --seconds $${DURATION:-60}

bench-mirror: bench-data
	nice -n 10 $(PY) bench/mirror.py

serve-proof: deps
	nice -n 10 $(BIN)/pytest -q -p no:cacheprovider tests/test_serve_protocol.py tests/test_serve.py tests/test_serve_e2e.py tests/test_serve_live.py tests/test_serve_failover.py

bench-serve: bench-data
	$(PY) bench/serve.py --data bench/data --repeat $(or $(REPEAT),3)

bench-serve-apply: deps
	nice -n 10 $(PY) bench/serve_apply.py $(if $(KIND),--kind $(KIND)) --trx $(or $(TRX),20000)

export-proof: deps
	EXPORT_BIG_MB=25 $(BIN)/pytest -q tests/test_export_e2e.py

spark-proof: deps
	BINLOGKIT_SPARK_PROOF=1 $(BIN)/pytest -q tests/test_spark_source.py tests/test_spark_source_cluster.py

bench-spark: deps-py
	$(PY) bench/spark.py $${FILES:+--files $$FILES} $${TRX:+--trx-per-file $$TRX}

bench-spark-changes: bench-data
	$(PY) bench/spark_changes.py --check
	$(BIN)/pytest -q tests/test_spark_changes_bench.py

bench-spark-first: deps-py
	rm -rf /tmp/binlogkit-spark-first && $(PY) -m fixtures.docs_data archive /tmp/binlogkit-spark-first
	$(PY) bench/spark_first.py /tmp/binlogkit-spark-first/archive

bench-spark-sizing: bench-data
	$(PY) bench/spark_sizing.py cpu bench/data/mariadb-bin.000001
	$(PY) bench/spark_sizing.py plan --files 10000

bench-encryption: bench-data
	$(PY) bench/encryption.py

fuzz-encryption: deps-py
	nice -n 19 $(PY) scripts/fuzz_encryption.py --seconds 300

pull-soak: deps
	nice -n 19 $(PY) -m fixtures.lab.pull_lab --trials $${TRIALS:-30} $${KIND:+--kind $$KIND}

bench-pull: bench-data
	$(PY) bench/pull.py $(PULL_FILE) --repeat $${REPEAT:-5} --bytecode

bench-pull-mysql: deps
	$(PY) bench/pull.py --kind mysql-9.7 --mysql-mb $${MB:-200} --repeat 3

past-4g: deps
	$(PY) -m fixtures.lab.past4g

bench-audit: bench-data
	$(PY) bench/audit_archive.py --gb 20 --big-gb 100 --merge-files 100000

bench-s3: deps-py
	$(PY) bench/s3.py --mb $${MB:-400}

bench-pitr: deps-py
	$(PY) bench/pitr_archive.py --files 50 400 --trx-per-file 3000

BASE ?= main
bench-ab: deps-py
	$(PY) bench/ab.py --base $(BASE) $${MB:+--mb $$MB} $${RUNS:+--runs $$RUNS}

# stdlib only (ast, regular expressions, the `duplicates` tool when installed): no venv needed
arch-counts:
	@$(PYTHON) scripts/arch_counts.py --before docs/architecture-counts-before.json

report-screenshot: deps
	$(PY) scripts/report_screenshot.py docs/report.png

clean:
	rm -rf build .pytest_cache .hypothesis

asan-rowtext: deps-py
	PY=$(PY) bash scripts/asan-rowtext.sh

asan-rowarrow: deps-py
	PY=$(PY) bash scripts/asan-rowarrow.sh

asan-fastdecode: deps-py
	PY=$(PY) bash scripts/asan-fastdecode.sh

asan-pullscan: deps-py
	PY=$(PY) bash scripts/asan-pullscan.sh

asan-eventcols: deps-py
	PY=$(PY) bash scripts/asan-eventcols.sh $${FUZZ_SECONDS:-120}
