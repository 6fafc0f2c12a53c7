#!/usr/bin/env bash
# Trains the bundled demo model on the GPU machine (tools/demo-model/README.md).
#
#   bench/gpu/train-demo.sh OUT_DIR [MINUTES] [EPOCHS...]
#
# Reads the token streams tools/demo-model/run-all.sh made on the build host
# (tools/demo-model/data/gpu, copied to this machine) and trains
# tools/demo-model/train.py once per EPOCHS value (default: 5 10 20 passes
# over the training stream), each within MINUTES / (number of runs) of wall
# time (MINUTES default 7: three runs and their start-up within ten minutes).
# A corpus of a million words is overfitted at some number of passes no one
# can tell beforehand, so the runs share the time and the one with the lowest
# held-out loss is kept: its config.json, bf16 safetensors shards (each under
# train.py's --shard-mib, 15 MiB) and train_report.json go to OUT_DIR, with
# train_log.txt (every run's log and the choice).
# Needs python3 with torch (and transformers, optional: the saved weights are
# then checked against LlamaForCausalLM). TRAIN_ARGS adds train.py options to
# every run (a smoke test: TRAIN_ARGS="--hidden 64 --layers 2 --ctx 64").
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: bench/gpu/train-demo.sh OUT_DIR [MINUTES] [EPOCHS...]}"
minutes="${2:-7}"
shift $(( $# >= 2 ? 2 : 1 ))
epochs=("$@")
(( ${#epochs[@]} )) || epochs=(5 10 20)
data="$repo/tools/demo-model/data/gpu"
for f in train.bin train.json val.bin val.json; do
  [[ -f $data/$f ]] || { echo "missing $data/$f: run tools/demo-model/run-all.sh and carry tools/demo-model/data/gpu" >&2; exit 1; }
done
mkdir -p "$out"
log="$out/train_log.txt"
work="$(mktemp -d)"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$log" || true
export PYTHONUNBUFFERED=1
per_run=$(python3 -c "print(round($minutes / ${#epochs[@]}, 2))")
for e in "${epochs[@]}"; do
  echo "=== run: --max-epochs $e, --minutes $per_run" | tee -a "$log"
  python3 "$repo/tools/demo-model/train.py" --data "$data" --out "$work/epochs-$e" \
    --minutes "$per_run" --max-epochs "$e" ${TRAIN_ARGS:-} 2>&1 | tee -a "$log" || echo "run $e failed" | tee -a "$log"
done
best="$(python3 - "$work" 2>>"$log" <<'PY'
import glob, json, os, sys
runs = []
for report in glob.glob(os.path.join(sys.argv[1], "*", "train_report.json")):
    with open(report) as f:
        runs.append((json.load(f)["heldout_loss"], os.path.dirname(report)))
if not runs:
    sys.exit("no run finished")
for loss, path in sorted(runs):
    print(f"{os.path.basename(path)}: held-out loss {loss}", file=sys.stderr)
print(min(runs)[1])
PY
)"
echo "=== kept $(basename "$best")" | tee -a "$log"
cp "$best"/config.json "$best"/model*.safetensors* "$best"/train_report.json "$out"/
ls -la "$out"
