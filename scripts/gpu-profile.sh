#!/usr/bin/env bash
# Runs on the GPU machine: where a decode step's time goes. Nsight Compute
# times every kernel of a few decode steps of `strata bench` (kernels run
# serialized under it, so the sum is GPU time without launch gaps); the
# same bench without the profiler gives the wall time per step to compare.
# With CONCURRENCY=N it profiles a whole short run of N concurrent sequences
# (8-token prompts, 8 tokens each: almost all of it decode steps of N rows).
# Nsight Compute flushes the caches before each kernel by default, so small
# kernels read long; CACHE_CONTROL=none keeps them warm, as in a real step.
# PROMPT_TOKENS=N (batch 1 only) decodes after an N-token prompt instead of
# 64, so that attention reads as many keys as in the benchmark's decode;
# LAUNCH_SKIP=K skips K launches instead of 1500 (a 512-token prompt's
# prefills, warm-up and timed, take more than 1500: the default profiles
# some of the second).
# Build and carry as for scripts/gpu-bench.sh; then:
#   scripts/device-unpack.sh && [CONCURRENCY=N | PROMPT_TOKENS=N] [CACHE_CONTROL=none] \
#     scripts/gpu-profile.sh OUT_DIR [SHAPE:TYPE...]
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${1:?usage: gpu-profile.sh OUT_DIR [SHAPE:TYPE...]}
shift
strata=build-device/bin/strata
mkdir -p "$out_dir"
for spec in "${@:-1b:f16}"; do
  shape=${spec%%:*} type=${spec#*:}
  model=$(scripts/make-bench-model.sh "$shape" "$type")
  if [[ -n ${CONCURRENCY:-} ]]; then
    spec=$spec-c$CONCURRENCY
    range=(--launch-skip 0 --launch-count 40000)
    run=(--concurrency "$CONCURRENCY" --prompt-tokens 8 --gen-tokens 8)
  else  # skip the warm-up and the prefill; profile 4 decode steps' kernels
    range=(--launch-skip "${LAUNCH_SKIP:-1500}" --launch-count 1200)
    run=(--prompt-tokens "${PROMPT_TOKENS:-64}" --gen-tokens 40)
  fi
  name=ncu-${spec/:/-}  # the device tool brings back plain names only
  ncu --clock-control none --cache-control "${CACHE_CONTROL:-all}" --csv \
    --metrics gpu__time_duration.sum "${range[@]}" \
    "$strata" bench -m "$model" --backend cuda "${run[@]}" \
    >"$out_dir/$name.csv" 2>"$out_dir/$name.log" || true
  python3 - "$out_dir/$name.csv" "$spec" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; name_i = head.index("Kernel Name"); val_i = head.index("Metric Value")
unit_i = head.index("Metric Unit")
tot = collections.defaultdict(float); cnt = collections.Counter()
for r in rows[1:]:
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}
    v = float(r[val_i].replace(",", "")) * scale[r[unit_i]]
    k = r[name_i][:90]; tot[k] += v; cnt[k] += 1
all_us = sum(tot.values())
print(f"== {sys.argv[2]}: {sum(cnt.values())} kernels, {all_us:.0f} us in all")
for k, v in sorted(tot.items(), key=lambda kv: -kv[1])[:14]:
    print(f"{v:9.0f} us {100*v/all_us:5.1f}% n={cnt[k]:4d} mean={v/cnt[k]:7.1f} {k}")
PY
done
