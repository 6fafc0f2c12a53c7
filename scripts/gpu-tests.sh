#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build-device/bin from
# scripts/build-device.sh): the GPU-labelled tests and the device listing.
set -euo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
build-device/bin/strata devices
status=0
for test in build-device/bin/*_test; do
  echo "== $test"
  "$test" || status=1
done
exit $status
