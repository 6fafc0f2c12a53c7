#!/usr/bin/env bash
# The CPU figures of docs/PERFORMANCE.md: Llama-3.2-1B-shaped models (hidden
# 2048, 16 layers, 32/8 heads, FFN 8192, Llama 3 tokenizer, tied head, Llama 3
# RoPE scaling) with random weights, in Q8_0 and Q4_K; prefill of a 512-token
# prompt and decode at batch 1. Prints one JSON object per model. The models
# are written once, by strata-dev, into build/models/. STRATA and STRATA_DEV
# name the binaries (default build/service/strata, build/dev/strata-dev);
# TYPES the weight types (default "q8_0 q4_k").
#   bench/cpu-1b.sh
set -euo pipefail
cd "$(dirname "$0")/.."
strata=${STRATA:-build/service/strata}
strata_dev=${STRATA_DEV:-build/dev/strata-dev}
mkdir -p build/models
for type in ${TYPES:-q8_0 q4_k}; do
  model=build/models/llama-3.2-1b-shape-$type.gguf
  if [[ ! -f $model ]]; then
    "$strata_dev" make-model --arch llama --tokenizer llama3 --hidden 2048 --layers 16 \
      --heads 32 --kv-heads 8 --ffn 8192 --ctx 8192 --rope-theta 500000 \
      --rope-scaling llama3 --rope-scaling-factor 32 --tied-output --type "$type" --seed 1 \
      -o "$model"
  fi
  "$strata" bench -m "$model" --prompt-tokens 512 --gen-tokens 64
done
