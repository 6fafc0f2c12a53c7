#!/usr/bin/env bash
# Runs on the GPU machine: the GPU-labelled tests, the HF goldens on CUDA, and
# compute-sanitizer memcheck over the CUDA tests; each test's log goes to
# OUT_DIR (default /tmp/strata-gpu-tests). Exits 1 when any failed.
# Build first (bench/gpu/build.sh), copy build-device/carry over, then:
#   bench/gpu/unpack.sh && bench/gpu/tests.sh [OUT_DIR]
# TESTS="cuda_matmul_test ..." runs only those, MEMCHECK_TESTS names the
# memcheck list (MEMCHECK_FILTER a gtest filter for it); MEMCHECK=0 skips
# memcheck.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
out_dir=${1:-/tmp/strata-gpu-tests}
mkdir -p "$out_dir"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
build-device/bin/strata devices
status=0
if [[ -n ${TESTS:-} ]]; then
  tests=()
  for name in $TESTS; do tests+=("build-device/bin/$name"); done
else
  tests=(build-device/bin/*_test)
fi
for test in "${tests[@]}"; do
  name=$(basename "$test")
  echo "== $name"
  timeout "${TEST_TIMEOUT:-600}" "$test" --gtest_brief=1 >"$out_dir/$name.log" 2>&1
  rc=$?
  if ((rc == 77)); then
    echo "(passed, some skipped)"  # tests/support/gtest_main.cpp
  elif ((rc != 0)); then
    status=1
    tail -40 "$out_dir/$name.log"
  fi
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |max \|logit|agreement|identical" "$out_dir/$name.log" | head -60
done
if [[ ${MEMCHECK:-1} == 1 ]]; then
  for test in ${MEMCHECK_TESTS:-cuda_ops_test cuda_backend_test cuda_matmul_test \
    cuda_attention_test cuda_kquant_decode_test cuda_token_choice_test}; do
    echo "== memcheck $test"
    timeout "${MEMCHECK_TIMEOUT:-300}" compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 \
      "build-device/bin/$test" --gtest_brief=1 ${MEMCHECK_FILTER:+--gtest_filter=$MEMCHECK_FILTER} \
      >"$out_dir/memcheck-$test.log" 2>&1 || { status=1; tail -30 "$out_dir/memcheck-$test.log"; }
    grep -E "ERROR SUMMARY" "$out_dir/memcheck-$test.log"
  done
fi
exit $status
