#!/usr/bin/env bash
# Build (once, cached) a Debian sid chroot holding one of today's servers for the lab:
#   scripts/lab-chroot.sh mysql-9.7 | mariadb-11.8      -> prints the chroot's path
# The mirror is the one this machine's apt already uses (read from its sources, never named
# here); sid's Release on a frozen mirror is past its Valid-Until date, so apt inside the chroot
# runs with Acquire::Check-Valid-Until=false. Cached under $BINLOGKIT_CHROOTS
# (default /var/cache/binlogkit/chroots): base-sid (debootstrap minbase, ~3 min) once, then one
# copy per server kind with its packages installed; a kind whose stamp file exists is reused.
# Needs root (debootstrap, chroot). Services are never started inside (policy-rc.d exits 101).
set -euo pipefail
kind="${1:?usage: lab-chroot.sh mysql-9.7|mariadb-11.8}"
case "$kind" in
    mysql-9.7)    pkgs=(mysql-server mysql-client) ;;
    mariadb-11.8) pkgs=(mariadb-server mariadb-client mariadb-backup) ;;
    *) echo "lab-chroot: unknown kind $kind (mysql-9.7, mariadb-11.8)" >&2; exit 2 ;;
esac
cache="${BINLOGKIT_CHROOTS:-/var/cache/binlogkit/chroots}"
root="$cache/$kind"
if [ -e "$root/.binlogkit-ready" ]; then echo "$root"; exit 0; fi
[ "$(id -u)" = 0 ] || { echo "lab-chroot: needs root (debootstrap, chroot): run as root or use sudo" >&2; exit 2; }
command -v debootstrap >/dev/null 2>&1 || {
    echo "lab-chroot: installing debootstrap" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null || {
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
}
mirror="${BINLOGKIT_MIRROR:-}"
if [ -z "$mirror" ]; then
    mirror=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1 || true)
    [ -n "$mirror" ] || mirror=$(grep -hsE '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -1 || true)
fi
[ -n "$mirror" ] || { echo "lab-chroot: no Debian mirror found in /etc/apt sources (set BINLOGKIT_MIRROR)" >&2; exit 2; }
mkdir -p "$cache"
exec 9>"$cache/.lock"; flock 9
[ -e "$root/.binlogkit-ready" ] && { echo "$root"; exit 0; }
base="$cache/base-sid"
if [ ! -e "$base/.binlogkit-ready" ]; then
    rm -rf "$base.tmp"
    echo "lab-chroot: debootstrap sid (minbase) into $base" >&2
    debootstrap --variant=minbase --include=ca-certificates,procps sid "$base.tmp" "$mirror" > "$cache/debootstrap.log" 2>&1 \
        || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    touch "$base.tmp/.binlogkit-ready"
    rm -rf "$base"; mv "$base.tmp" "$base"
fi
rm -rf "$root.tmp"
cp -a "$base" "$root.tmp"
rm -f "$root.tmp/.binlogkit-ready"
printf '#!/bin/sh\nexit 101\n' > "$root.tmp/usr/sbin/policy-rc.d"; chmod +x "$root.tmp/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root.tmp/etc/resolv.conf" 2>/dev/null || true
echo "lab-chroot: apt-get install ${pkgs[*]} in $root" >&2
in_root() { chroot "$root.tmp" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
in_root apt-get -o Acquire::Check-Valid-Until=false update -qq > "$cache/$kind.log" 2>&1 || { tail -20 "$cache/$kind.log" >&2; exit 1; }
in_root apt-get -o Acquire::Check-Valid-Until=false install -y -qq --no-install-recommends "${pkgs[@]}" >> "$cache/$kind.log" 2>&1 \
    || { tail -20 "$cache/$kind.log" >&2; exit 1; }
in_root apt-get clean
in_root dpkg-query -W -f='${Package} ${Version}\n' "${pkgs[@]}" > "$root.tmp/.binlogkit-ready"
rm -rf "$root"; mv "$root.tmp" "$root"
echo "$root"
