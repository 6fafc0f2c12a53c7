#!/usr/bin/env bash
# The release build: optimized, with machine code for every GPU generation
# Strata supports (Ampere sm_80 / sm_86, Ada sm_89, Hopper sm_90, Blackwell
# workstation sm_120) and the CUDA runtime linked statically, under
# build-release/. cuBLAS is linked dynamically: the package ships it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=ON \
  -DSTRATA_TESTS=OFF "-DCMAKE_CUDA_ARCHITECTURES=80;86;89;90;120" "$@"
cmake --build build-release -j "$(nproc)" --target strata
