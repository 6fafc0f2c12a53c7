#!/usr/bin/env bash
# Configures build-device/ for a GPU machine without the build's libraries: C
# libraries and libstdc++ linked statically (no liburing, SQLite, PCRE2 or
# utf8proc needed there), CUDA for sm_90 only, tests on. Shared by
# bench/gpu/build.sh and bench/gpu/build-variants.sh; extra arguments go to
# cmake (e.g. -DCMAKE_CUDA_ARCHITECTURES=80 for another GPU).
#   bench/gpu/configure.sh [CMAKE_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_STATIC_DEPS=ON \
  -DSTRATA_CUDA=ON -DSTRATA_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
