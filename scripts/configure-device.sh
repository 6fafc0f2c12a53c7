#!/usr/bin/env bash
# Configures build-device/ for the GPU machine: C libraries and libstdc++
# linked statically (that machine has no liburing, SQLite, PCRE2 or utf8proc),
# CUDA for sm_90 only (the H200), tests on. Shared by scripts/build-device.sh
# and scripts/build-device-variants.sh; extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_STATIC_DEPS=ON \
  -DSTRATA_CUDA=ON -DSTRATA_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
