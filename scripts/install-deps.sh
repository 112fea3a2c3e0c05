#!/usr/bin/env bash
# Install what binlogkit's tests and lab need from Debian: mariadb-server, mariadb-client, mariadb-backup, strace,
# a Java runtime for Spark (default-jre-headless) and chromium (the HTML report's browser tests).
# Does nothing when they are present; needs root (or passwordless sudo) otherwise, and says so.
set -euo pipefail
need=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v mariadb-binlog >/dev/null 2>&1 || need+=(mariadb-client)
command -v strace >/dev/null 2>&1 || need+=(strace)
# pyspark's JVM, for the Spark audit tests (local mode and the standalone cluster)
command -v java >/dev/null 2>&1 || [ -x "${JAVA_HOME:-/nonexistent}/bin/java" ] || need+=(default-jre-headless)
# a physical backup for the pitr proof (mariabackup's xtrabackup_binlog_info)
command -v mariadb-backup >/dev/null 2>&1 || command -v mariabackup >/dev/null 2>&1 || need+=(mariadb-backup)
# a real browser for the audit report's tests (headless: --screenshot / --dump-dom)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ ${#need[@]} -eq 0 ] && { echo "deps: mariadb-server, mariadb-client, mariadb-backup, strace, java and chromium are present"; exit 0; }
uid="${DEPS_UID:-$(id -u)}"
if [ "$uid" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "deps: missing ${need[*]}, and this is not root (no passwordless sudo either)." >&2
    echo "deps: run as root:  apt-get install -y ${need[*]}" >&2
    exit 1
fi
echo "deps: installing ${need[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
# The package's postinst would start a system mariadbd; the lab never uses it, so keep it off.
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}" >/dev/null
echo "deps: installed ${need[*]}"
