#!/usr/bin/env bash
# On the GPU machine, first: unpacks build-device/carry/device.tar.gz (made by
# scripts/build-device.sh), or the tarball of build-device/carry named as the
# argument (variants.tar.gz, or a .tar.xz when the carry nears its limit: tar
# detects the compression), into this checkout, and leads the source path the
# binaries were built in (build-device/bin/source-dir) here, so that tests
# find tests/data and `strata dev make-model` its tokenizers.
set -euo pipefail
cd "$(dirname "$0")/.."
tar -xf "build-device/carry/${1:-device.tar.gz}"
built_in=$(cat build-device/bin/source-dir)
if [[ ! -e $built_in ]]; then
  mkdir -p "$(dirname "$built_in")"
  ln -s "$PWD" "$built_in"
fi
mkdir -p build-device/service
ln -sf "$PWD/build-device/bin/strata" build-device/service/strata
