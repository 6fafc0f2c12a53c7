#!/usr/bin/env bash
# On the GPU machine, first: unpacks build-device/carry/device.tar.gz (made by
# bench/gpu/build.sh), or the tarball in build-device/carry named as the
# argument (variants.tar.gz or variants.tar.xz from bench/gpu/build-variants.sh:
# tar detects the compression), into this checkout. It then leads the source
# path the binaries were built in (build-device/bin/source-dir) here, so that
# the tests find tests/data and `strata-dev make-model` its tokenizers, and
# links build-device/service/strata and build-device/dev/strata-dev to the
# packed binaries, where the tests look for them.
#   bench/gpu/unpack.sh [TARBALL]
set -euo pipefail
cd "$(dirname "$0")/../.."
tar -xf "build-device/carry/${1:-device.tar.gz}"
built_in=$(cat build-device/bin/source-dir)
if [[ ! -e $built_in ]]; then
  mkdir -p "$(dirname "$built_in")"
  ln -s "$PWD" "$built_in"
fi
mkdir -p build-device/service build-device/dev
ln -sf "$PWD/build-device/bin/strata" build-device/service/strata
ln -sf "$PWD/build-device/bin/strata-dev" build-device/dev/strata-dev
