#!/usr/bin/env bash
# `make demo`: binlogkit on files a real MariaDB 10.11 wrote (committed under fixtures/).
set -uo pipefail
BK="${BINLOGKIT:-binlogkit}"
SET=fixtures/mariadb-10.11
hr() { printf '\n== %s\n' "$*"; }

hr "A primary's binlog (first 25 events): offsets, types, end_log_pos, CRC32 checked"
"$BK" decode "$SET/replication-gtid/primary/mariadb-bin.000001.xz" | head -26

hr "The same, as JSON lines (first 3)"
"$BK" decode --json "$SET/replication-gtid/primary/mariadb-bin.000001.xz" | head -3

hr "A relay log left by kill -9 in the middle of a 1 MB row event (crash-torn-position)"
"$BK" decode "$SET/crash-torn-position/relay/relay-bin.000005.xz" 2>&1 | tail -4
echo "exit code: ${PIPESTATUS[0]} (1 = damaged input, reported with file, offset and event)"

hr "What MariaDB itself did on restart from that state (from the fixture's manifest)"
grep -A4 '^| relay_log_recovery' "$SET/crash-torn-position/README.md"
exit 0
