#!/usr/bin/env bash
# `make demo`: binlogkit on files a real MariaDB 10.11 wrote (committed under fixtures/).
set -uo pipefail
BK="${BINLOGKIT:-binlogkit}"
SET=fixtures/mariadb-10.11
hr() { printf '\n== %s\n' "$*"; }

hr "verify: a primary's whole binlog set (framing + CRC32), and a crashed replica's relay logs"
"$BK" verify "$SET/replication-gtid/primary/mariadb-bin.index"
"$BK" verify "$SET/crash-torn-position/relay"
echo "exit code: $? (1 = something is damaged; the BAD line says where)"

hr "decode: the first transactions of the primary, as mysqlbinlog lists them (--base64-output=decode-rows)"
"$BK" decode --base64-output=decode-rows "$SET/replication-gtid/primary/mariadb-bin.000001.xz" --start-position 1407 --stop-position 2300

hr "decode (default): replayable, as mariadb-binlog prints it -- BINLOG blocks and all; | mariadb applies it"
"$BK" decode "$SET/replication-gtid/primary/mariadb-bin.000001.xz" --start-position 1407 --stop-position 1703 | cut -c1-110

hr "decode --json: a GTID event and its commit"
"$BK" decode --json --type gtid,xid --start-position 1407 "$SET/replication-gtid/primary/mariadb-bin.000001.xz" | head -2

hr "decode -v: row images as values, like mysqlbinlog -v (column names from binlog_row_metadata=FULL)"
"$BK" decode --base64-output=decode-rows -v --type write_rows_v1 "$SET/row-types-full-metadata/primary/mariadb-bin.000002.xz" \
    | grep -a -A10 -m1 'INSERT INTO `types`.`extra`' | cut -c1-110

hr "decode -v --json: typed rows; text in its own charset (latin1, cp1251, ucs2, sjis...), UUID named by --column-type"
"$BK" decode -v --json --type write_rows_v1 --column-type 'types.extra.u=uuid' \
    "$SET/row-types-full-metadata/primary/mariadb-bin.000002.xz" | grep -m1 '"table": "types.charsets"' | sed 's/.*"table"/{"table"/'

hr "decode: the relay log left by kill -9 in the middle of a 1 MB row event (its open transaction rolled back)"
"$BK" decode "$SET/crash-torn-position/relay/relay-bin.000005.xz" 2>&1 | tail -7 | cut -c1-160
echo "exit code: ${PIPESTATUS[0]} (1 = damaged input, reported with file, offset and event)"

hr "transactions of that crashed relay log: the last ones, and the partial one"
"$BK" transactions --source-file mariadb-bin.000002 "$SET/crash-torn-position/relay" 2>&1 | tail -4

hr "gtids: what the multi-source server C binlogged with gtid_ignore_duplicates=OFF"
"$BK" gtids "$SET/ring-duplicates-off/C/binlog" | tail -2

hr "audit: every committed archive of the multi-source ring (duplicates with gtid_ignore_duplicates=OFF)"
"$BK" audit "$SET/ring-duplicates-off" | head -14

hr "What MariaDB itself did on restart from a crash at relay-log rotation (fixture manifest)"
grep -A4 '^| relay_log_recovery' "$SET/crash-rotation-small-position/README.md"

hr "recover: the plan for that relay directory (a copy in a temporary folder), then --apply"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/relay"
for f in "$SET/crash-rotation-small-position/relay/"*; do
  case "$f" in
    *.xz) python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
            "$f" "$work/relay/$(basename "${f%.xz}")" ;;
    *) cp "$f" "$work/relay/" ;;
  esac
done
"$BK" recover "$work/relay"
echo "exit code: $? (1 = a repair is pending)"
"$BK" recover --apply "$work/relay" | tail -1
"$BK" recover "$work/relay" | grep -E "nothing to do|next source"
bin_dir=$(cd "$(dirname "$BK")" && pwd)
echo
echo "== binlogkit is installed in $bin_dir (not on your PATH yet):"
echo "     $bin_dir/binlogkit --help"
echo "   or, for this shell:  source $(dirname "$bin_dir")/bin/activate  then  binlogkit --help"
exit 0
