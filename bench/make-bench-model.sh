#!/usr/bin/env bash
# Writes (once) a benchmark model of a real model's shape with random weights
# and the Llama 3 tokenizer, and prints its path. SHAPE: 1b (Llama-3.2-1B:
# tied head, Llama 3 RoPE scaling 32) or 8b (Llama-3.1-8B: scaling 8). TYPE:
# any `strata-dev make-model --type`. STRATA_DEV names the strata-dev binary
# (default build-device/bin/strata-dev, as bench/gpu/build.sh packs it;
# build/dev/strata-dev in a plain build), MODEL_DIR the folder (default
# /tmp/strata-models).
#   bench/make-bench-model.sh SHAPE TYPE
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bench/make-bench-model.sh 1b|8b TYPE"
shape=${1:?$usage} type=${2:?$usage}
strata_dev=${STRATA_DEV:-build-device/bin/strata-dev}
models=${MODEL_DIR:-/tmp/strata-models}
path=$models/llama-$shape-$type.gguf
mkdir -p "$models"
if [[ ! -f $path ]]; then
  case $shape in
    1b) "$strata_dev" make-model --arch llama --tokenizer llama3 --hidden 2048 --layers 16 \
          --heads 32 --kv-heads 8 --ffn 8192 --ctx 8192 --rope-theta 500000 \
          --rope-scaling llama3 --rope-scaling-factor 32 --tied-output --type "$type" --seed 1 \
          -o "$path" >&2 ;;
    8b) "$strata_dev" make-model --arch llama --tokenizer llama3 --hidden 4096 --layers 32 \
          --heads 32 --kv-heads 8 --ffn 14336 --ctx 8192 --rope-theta 500000 \
          --rope-scaling llama3 --rope-scaling-factor 8 --type "$type" --seed 1 -o "$path" >&2 ;;
    *) echo "bench/make-bench-model.sh: unknown shape $shape" >&2; exit 2 ;;
  esac
fi
echo "$path"
