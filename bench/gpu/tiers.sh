#!/usr/bin/env bash
# Runs on the GPU machine: the KV tier figures of docs/PERFORMANCE.md —
# `strata bench tiers` on the CUDA backend for each SHAPE:TYPE in $SPECS
# (default "1b:f16 8b:q4_k"): T0 <-> T1 moves through the copy stream against
# plain pinned cudaMemcpy, T1 <-> T2 moves against plain O_DIRECT on the
# machine's disk, and time to first token of prompts of each length in
# $PROMPTS (default 4096,8192) whose prefix is in T0, T1, T2 or nowhere. Results: OUT_DIR/tiers-SHAPE-TYPE.json.
# Build first (bench/gpu/build.sh), copy build-device/carry over, then:
#   bench/gpu/unpack.sh && bench/gpu/tiers.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out_dir=${1:?usage: bench/gpu/tiers.sh OUT_DIR}
mkdir -p "$out_dir"
# On the checkout's disk, not /tmp (which may be RAM): T2 must be a disk.
cache_dir=$PWD/build-device/tiers-cache
for spec in ${SPECS:-1b:f16 8b:q4_k}; do
  shape=${spec%%:*} type=${spec#*:}
  model=$(bench/make-bench-model.sh "$shape" "$type")
  echo "== tiers $shape-$type" >&2
  build-device/bin/strata bench tiers -m "$model" --backend cuda --cache-dir "$cache_dir" \
    --prompt-tokens "${PROMPTS:-4096,8192}" 2>>"$out_dir/gpu-tiers.log" >"$out_dir/tiers-$shape-$type.json"
  python3 - "$out_dir/tiers-$shape-$type.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t0 = d["t0"]
if isinstance(t0, dict):
    print(f"T1->T0 {t0['t1_to_t0_gb_per_s']:.1f} GB/s ({t0['to_device_ratio']:.2f} of plain), "
          f"T0->T1 {t0['t0_to_t1_gb_per_s']:.1f} GB/s ({t0['to_host_ratio']:.2f} of plain)")
m = d["move"]
print(f"T1->T2 {m['t1_to_t2_gb_per_s']:.2f} GB/s ({m['write_ratio']:.2f}), "
      f"T2->T1 {m['t2_to_t1_gb_per_s']:.2f} GB/s ({m['read_ratio']:.2f})")
for t in d["ttft"]:
    print(f"{t['prompt_tokens']:6} tokens: cold {t['cold_s']*1e3:8.1f} ms, T0 {t.get('t0_s', 0)*1e3:7.1f}, "
          f"T1 {t['t1_s']*1e3:7.1f}, T2 {t['t2_s']*1e3:7.1f}; same first token {t['same_first_token']}")
PY
  rm -f "$model"  # one model on disk at a time
done
rm -rf "$cache_dir"
