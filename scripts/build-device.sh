#!/usr/bin/env bash
# Builds the binaries that run on the GPU machine: C libraries and libstdc++
# linked statically (that machine has no liburing, SQLite, PCRE2 or utf8proc),
# CUDA for sm_90 only, stripped, under build-device/bin/ (carried by the
# device tool: keep it under 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_STATIC_DEPS=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
cmake --build build-device -j "$(nproc)" --target strata
mkdir -p build-device/bin
strip -o build-device/bin/strata build-device/service/strata
ls -l build-device/bin
