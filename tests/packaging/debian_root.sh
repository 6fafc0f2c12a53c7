#!/usr/bin/env bash
# Unpacks a clean Debian 12 root into DEST: debootstrap --variant=minbase plus
# PACKAGES, and nothing else. Making one downloads and unpacks ~100 packages
# (a minute or two), so the result is kept as a tarball keyed by the package
# list (a rerun takes seconds), and debootstrap keeps the .debs it fetched for
# the next list. Cache: $STRATA_TEST_CACHE, else ~/.cache/strata-tests (without
# a home: /var/cache/strata-tests).
#   debian_root.sh DEST PACKAGE...
set -euo pipefail

dest="$1"
shift
suite=bookworm
mirror="${STRATA_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
default_cache=/var/cache/strata-tests
if [[ -n ${HOME:-} ]]; then default_cache="${XDG_CACHE_HOME:-$HOME/.cache}/strata-tests"; fi
cache="${STRATA_TEST_CACHE:-$default_cache}"
packages="$(printf '%s\n' "$@" | sort -u | paste -sd, -)"
key="$(printf '%s %s %s' "$suite" "$mirror" "$packages" | sha256sum | cut -c1-16)"
tarball="$cache/debian-root-$key.tar.zst"

if [[ ! -f $tarball ]]; then
  mkdir -p "$cache/debs"
  work="$(mktemp -d "$cache/making.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  echo "debian_root: debootstrap $suite minbase + $packages"
  if ! debootstrap --variant=minbase --cache-dir="$cache/debs" --include="$packages" \
    "$suite" "$work/root" "$mirror" >"$work/log" 2>&1; then
    tail -n 40 "$work/log" >&2
    exit 1
  fi
  chroot "$work/root" apt-get clean  # the .debs are in $cache/debs already
  tar -C "$work/root" --zstd -cf "$work/root.tar.zst" .
  # Roots for other package lists are not wanted again.
  rm -f "$cache"/debian-root-*.tar.zst
  mv "$work/root.tar.zst" "$tarball"  # whole, or not there at all
fi

mkdir "$dest"
tar -C "$dest" --zstd -xf "$tarball"
