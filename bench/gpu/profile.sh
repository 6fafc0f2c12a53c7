#!/usr/bin/env bash
# Runs on the GPU machine: where a decode step's time goes. Nsight Compute
# times every kernel of a few decode steps of `strata bench` (kernels run
# serialized under it, so the sum is GPU time without launch gaps); the
# same bench without the profiler gives the wall time per step to compare.
# It prints the kernels with the most time, then one layer's kernels in
# launch order (each the median over the run's layers of that shape).
# With CONCURRENCY=N it profiles a whole short run of N concurrent sequences
# (8-token prompts, 8 tokens each: almost all of it decode steps of N rows).
# Nsight Compute flushes the caches before each kernel by default, so small
# kernels read long; CACHE_CONTROL=none keeps them warm, as in a real step.
# PROMPT_TOKENS=N (batch 1 only) decodes after an N-token prompt instead of
# 64, so that attention reads as many keys as in the benchmark's decode;
# LAUNCH_SKIP=K skips K launches instead of 1500 (a 512-token prompt's
# prefills, warm-up and timed, take more than 1500: the default profiles
# some of the second).
# Build and unpack as for bench/gpu/bench.sh; then:
#   bench/gpu/unpack.sh && [CONCURRENCY=N | PROMPT_TOKENS=N] [CACHE_CONTROL=none] \
#     bench/gpu/profile.sh OUT_DIR [SHAPE:TYPE...]
set -euo pipefail
cd "$(dirname "$0")/../.."
out_dir=${1:?usage: bench/gpu/profile.sh OUT_DIR [SHAPE:TYPE...]}
shift
strata=build-device/bin/strata
mkdir -p "$out_dir"
for spec in "${@:-1b:f16}"; do
  shape=${spec%%:*} type=${spec#*:}
  model=$(bench/make-bench-model.sh "$shape" "$type")
  if [[ -n ${CONCURRENCY:-} ]]; then
    spec=$spec-c$CONCURRENCY
    range=(--launch-skip 0 --launch-count 40000)
    run=(--concurrency "$CONCURRENCY" --prompt-tokens 8 --gen-tokens 8)
  else  # skip the warm-up and the prefill; profile 4 decode steps' kernels
    range=(--launch-skip "${LAUNCH_SKIP:-1500}" --launch-count 1200)
    run=(--prompt-tokens "${PROMPT_TOKENS:-64}" --gen-tokens 40)
  fi
  name=ncu-${spec/:/-}  # file names without ':'
  ncu --clock-control none --cache-control "${CACHE_CONTROL:-all}" --csv \
    --metrics gpu__time_duration.sum "${range[@]}" \
    "$strata" bench -m "$model" --backend cuda "${run[@]}" \
    >"$out_dir/$name.csv" 2>"$out_dir/$name.log" || true
  python3 - "$out_dir/$name.csv" "$spec" <<'PY'
import csv, sys, collections, statistics
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; name_i = head.index("Kernel Name"); val_i = head.index("Metric Value")
unit_i = head.index("Metric Unit"); grid_i = head.index("Grid Size")
tot = collections.defaultdict(float); cnt = collections.Counter()
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}
times = [float(r[val_i].replace(",", "")) * scale[r[unit_i]] for r in rows[1:]]
for r, v in zip(rows[1:], times):
    k = r[name_i][:90]; tot[k] += v; cnt[k] += 1
all_us = sum(tot.values())
print(f"== {sys.argv[2]}: {sum(cnt.values())} kernels, {all_us:.0f} us in all")
for k, v in sorted(tot.items(), key=lambda kv: -kv[1])[:14]:
    print(f"{v:9.0f} us {100*v/all_us:5.1f}% n={cnt[k]:4d} mean={v/cnt[k]:7.1f} {k}")
# One layer in launch order: the shortest period (by kernel name and grid)
# that the run repeats four times from its middle (or, where a prefill step
# is there, from a later or earlier eighth), each kernel's median over every
# repeat of that period in the run.
seq = [(r[name_i][:60], r[grid_i], v) for r, v in zip(rows[1:], times)]
keys = [(n, g) for n, g, _ in seq]
def period_at(at):
    return next((p for p in range(2, 33) if at + 4 * p <= len(keys) and
                 all(keys[i] == keys[i + p] for i in range(at, at + 3 * p))), None)
period = None
for eighth in (4, 5, 6, 7, 3, 2, 1):
    mid = len(keys) * eighth // 8
    if (period := period_at(mid)):
        break
if period:
    start = mid % period
    while start + period <= mid and keys[start:start + period] != keys[mid:mid + period]:
        start += 1
    reps = [seq[i:i + period] for i in range(start, len(seq) - period + 1, period)
            if keys[i:i + period] == keys[mid:mid + period]]
    layer = [statistics.median(rep[j][2] for rep in reps) for j in range(period)]
    print(f"-- a layer ({period} kernels, median of {len(reps)}): {sum(layer):.1f} us")
    for j in range(period):
        print(f"{layer[j]:9.1f} us grid {seq[mid + j][1]:>14} {seq[mid + j][0]}")
PY
done
