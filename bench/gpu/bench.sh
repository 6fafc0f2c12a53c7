#!/usr/bin/env bash
# Runs on the GPU machine: the CUDA figures of docs/PERFORMANCE.md.
# Llama-3.2-1B- and Llama-3.1-8B-shaped models (random weights, the Llama 3
# tokenizer), the SHAPE:TYPE list in $SPECS: batch-1 decode against the
# copy-bandwidth roofline, prefill of 512 and 4,096 tokens against the bf16
# GEMM rate (in 512-token passes; 4,096 also in one pass), and aggregate
# decode at each count of concurrent sequences in $CONCURRENCY (default
# "8 32 64"). Every `strata bench` prints its ceilings measured in the same
# run. Results: OUT_DIR/gpu-bench.jsonl, then a table.
# Build first (bench/gpu/build.sh), copy build-device/carry over, then:
#   bench/gpu/unpack.sh && bench/gpu/bench.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out_dir=${1:?usage: bench/gpu/bench.sh OUT_DIR}
strata=build-device/bin/strata
mkdir -p "$out_dir"
results=$out_dir/gpu-bench.jsonl

bench() {  # label model args...
  local label=$1 model=$2
  shift 2
  echo "== $label $*" >&2
  "$strata" bench -m "$model" --backend cuda "$@" 2>>"$out_dir/gpu-bench.log" |
    python3 -c "import json,sys; d=json.load(sys.stdin); d['label']='$label'; print(json.dumps(d))" \
      >>"$results"
}

for spec in ${SPECS:-1b:f16 1b:q8_0 1b:q4_k 8b:q4_k 8b:q8_0 8b:f16}; do
  shape=${spec%%:*} type=${spec#*:}
  model=$(bench/make-bench-model.sh "$shape" "$type")
  bench "$shape-$type-p512" "$model" --prompt-tokens 512 --gen-tokens 128
  bench "$shape-$type-p4096" "$model" --prompt-tokens 4096 --gen-tokens 8
  # The same prompt in one forward pass: block types dequantize each weight
  # once instead of once per 512-token chunk, and the GEMMs are 8x larger.
  bench "$shape-$type-p4096-1pass" "$model" --prompt-tokens 4096 --gen-tokens 8 \
    --max-batch-tokens 4096
  for n in ${CONCURRENCY:-8 32 64}; do
    bench "$shape-$type-c$n" "$model" --concurrency "$n" --prompt-tokens 128 --gen-tokens 128
  done
  rm -f "$model"  # one model on disk at a time (an 8B F16 one is 16 GB)
done

python3 - "$results" <<'PY'
import json, sys
print(f"{'run':24} {'prefill tok/s':>14} {'of GEMM':>8} {'decode tok/s':>13} {'of roofline':>12} "
      f"{'steady tok/s':>13} {'ITL p50 ms':>10} {'decode fwd ms':>13}")
for line in open(sys.argv[1]):
    d = json.loads(line)
    # Concurrency runs: the median gap between a stream's tokens, and a
    # decode-only step's time in the model's forward pass (the rest of such a
    # step is the engine's).
    print(f"{d['label']:24} {d.get('prefill_tok_s', 0):14.0f} {d.get('prefill_ratio_to_gemm', 0):8.2f} "
          f"{d['decode_tok_s']:13.1f} {d.get('decode_ratio_to_ceiling', 0):12.2f} "
          f"{d.get('decode_steady_tok_s', 0):13.1f} {d.get('itl_ms', {}).get('p50', 0):10.2f} "
          f"{d.get('engine', {}).get('decode_forward_ms_per_step', 0):13.2f}")
print("copy GB/s", d.get("copy_gb_per_s"), "gemm TFLOP/s", d.get("gemm_tflops"))
PY
