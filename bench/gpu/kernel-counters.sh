#!/usr/bin/env bash
# Runs on the GPU machine: hardware counters for a few launches of one kernel
# during batch-1 decode — speed of light (DRAM and SM throughput against
# their peaks), occupancy, warp stall reasons, memory workload, the
# schedulers' eligible warps, the instruction mix, each pipe's share of its
# peak, where warps stall most — to tell a latency-bound kernel from a
# bandwidth- or issue-bound one.
# Nsight Compute reads the counters (it needs access to the GPU's performance
# counters); the whole report is OUT_DIR/counters-SHAPE-TYPE.txt.
# Build and unpack as for bench/gpu/bench.sh; then:
#   bench/gpu/unpack.sh && bench/gpu/kernel-counters.sh OUT_DIR SHAPE:TYPE [KERNEL_REGEX]
# STRATA names another build of strata (default build-device/bin/strata);
# BENCH_ARGS the bench run (default batch 1: --prompt-tokens 64 --gen-tokens
# 16), LAUNCH_SKIP how many of the kernel's launches to skip (default 300),
# LAUNCH_COUNT how many to profile (default 4), CACHE_CONTROL=none to keep
# the caches warm between kernels (default: flushed before each).
set -euo pipefail
cd "$(dirname "$0")/../.."
out_dir=${1:?usage: bench/gpu/kernel-counters.sh OUT_DIR SHAPE:TYPE [KERNEL_REGEX]}
spec=${2:?usage: bench/gpu/kernel-counters.sh OUT_DIR SHAPE:TYPE [KERNEL_REGEX]}
# Matched on the demangled name: the default is the tensor-core matmul's
# decode configuration (up to 8 tokens), not its prefill-sized ones.
kernel=${3:-'mma_matmul_kernel<[^,]*, \(int\)1>'}
mkdir -p "$out_dir"
model=$(bench/make-bench-model.sh "${spec%%:*}" "${spec#*:}")
# Skip the warm-up and prefill launches; LAUNCH_COUNT launches of the kernel in decode.
ncu --clock-control none --kernel-name-base demangled --kernel-name "regex:$kernel" \
  --launch-skip "${LAUNCH_SKIP:-300}" --launch-count "${LAUNCH_COUNT:-4}" \
  --cache-control "${CACHE_CONTROL:-all}" \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section SchedulerStats --section InstructionStats \
  --section SourceCounters \
  --metrics 'regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active' \
  "${STRATA:-build-device/bin/strata}" bench -m "$model" --backend cuda ${BENCH_ARGS:---prompt-tokens 64 --gen-tokens 16} \
  >"$out_dir/counters-${spec/:/-}.txt" 2>&1 || true
grep -E "_kernel|Duration|Throughput|Registers|Occupancy|Grid Size|Warp Cycles Per Issued|Issued Ipc|Stall|Eligible Warps|Issue Slot|Executed Instructions|pipe_(alu|fma|fmaheavy|lsu)\.|issue_active" \
  "$out_dir/counters-${spec/:/-}.txt" | head -200
