#!/usr/bin/env bash
# Runs on the GPU machine: several strata builds benched in alternation
# (A B C A B C ...) on the same models, so that a kernel change is judged
# against the build it would replace under the same machine state. Builds
# are build-device/bin/strata-NAME (bench/gpu/build-variants.sh packs
# them); $BUILDS names them, $ROUNDS the alternations (default 2). Runs:
# batch-1 decode (--prompt-tokens 64 --gen-tokens 128) of each SHAPE:TYPE in
# $SPECS (default "8b:q4_k 1b:f16"), aggregate decode at each count in
# $CONCURRENCY on the first, and with LONG_PROMPT=N batch-1 decode after an
# N-token prompt on the first. Results: OUT_DIR/gpu-ab.jsonl, then a table.
#   bench/gpu/unpack.sh variants.tar.gz && BUILDS="main next-x" bench/gpu/ab.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out_dir=${1:?usage: bench/gpu/ab.sh OUT_DIR}
builds=(${BUILDS:?set BUILDS to the build names, e.g. BUILDS=\"main next-x\"})
specs=(${SPECS:-8b:q4_k 1b:f16})
mkdir -p "$out_dir"
results=$out_dir/gpu-ab.jsonl

bench() {  # build label model args...
  local build=$1 label=$2 model=$3
  shift 3
  echo "== $build $label $*" >&2
  "build-device/bin/strata-$build" bench -m "$model" --backend cuda "$@" \
    2>>"$out_dir/gpu-ab.log" |
    python3 -c "import json,sys; d=json.load(sys.stdin); d['build']='$build'; d['label']='$label'; print(json.dumps(d))" \
      >>"$results"
}

for spec in "${specs[@]}"; do
  model=$(bench/make-bench-model.sh "${spec%%:*}" "${spec#*:}")
  for ((round = 0; round < ${ROUNDS:-2}; ++round)); do
    for build in "${builds[@]}"; do
      bench "$build" "$spec-b1" "$model" --prompt-tokens 64 --gen-tokens 128
      if [[ $spec == "${specs[0]}" ]]; then
        for n in ${CONCURRENCY:-}; do
          bench "$build" "$spec-c$n" "$model" --concurrency "$n" --prompt-tokens 128 --gen-tokens 64
        done
        if [[ -n ${LONG_PROMPT:-} ]]; then
          bench "$build" "$spec-p$LONG_PROMPT" "$model" --prompt-tokens "$LONG_PROMPT" --gen-tokens 64
        fi
      fi
    done
  done
done

python3 - "$results" <<'PY'
import json, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    d = json.loads(line)
    runs[(d["label"], d["build"])].append(d)
print(f"{'run':16} {'build':24} {'decode tok/s (each round)':>28} {'of roofline':>12} {'steady tok/s':>13}"
      f" {'ITL p50 ms':>10} {'decode fwd ms':>13}")
for (label, build), ds in runs.items():
    rates = " ".join(f"{d['decode_tok_s']:.1f}" for d in ds)
    # Concurrency runs: the median gap between a stream's tokens, and a
    # decode-only step's time in the model's forward pass (the rest of such a
    # step is the engine's).
    itl = min(d.get("itl_ms", {}).get("p50", 0) for d in ds)
    forward = min(d.get("engine", {}).get("decode_forward_ms_per_step", 0) for d in ds)
    print(f"{label:16} {build:24} {rates:>28} {max(d.get('decode_ratio_to_ceiling', 0) for d in ds):12.3f} "
          f"{max(d.get('decode_steady_tok_s', 0) for d in ds):13.1f} {itl:10.2f} {forward:13.2f}")
PY
