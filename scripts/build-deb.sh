#!/usr/bin/env bash
# Packages a built strata binary as OUT_DIR/strata_<version>_amd64.deb (and its
# -dbgsym package), with debhelper, the debian/ folder in packaging/deb/ and the
# systemd units in packaging/systemd/.
#   scripts/build-deb.sh BINARY [OUT_DIR]       (OUT_DIR: build-deb)
# `make deb` gives it the release build; the packaging test (tests/packaging/)
# the binary the test build made. The version is CMake's project version, which
# debian/changelog must name. A binary that links cuBLAS gets the libraries it
# loads now (ldd) shipped in /usr/lib/strata, so the package needs no CUDA
# toolkit, only the driver. DEB_BUILD_OPTIONS (noddebs: no -dbgsym package)
# and DPKG_DEB_COMPRESSOR_TYPE (default xz) pass through.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "build-deb: $*" >&2; exit 1; }

(($# >= 1)) || die "usage: scripts/build-deb.sh BINARY [OUT_DIR]"
binary="$(realpath "$1")"
out_dir="$(realpath -m "${2:-$repo/build-deb}")"
[[ -x $binary ]] || die "$binary is not an executable"

version="$(sed -n 's/^project(strata VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")"
changelog_version="$(dpkg-parsechangelog -l "$repo/packaging/deb/debian/changelog" -S Version)"
# A package whose version disagrees with `strata --version` misleads whoever
# files a bug; make the changelog entry when the version changes.
[[ $changelog_version == "$version" ]] ||
  die "debian/changelog is at $changelog_version but CMakeLists.txt at $version:" \
    "add a changelog entry (dch -v $version)"

# The stage is a throw-away source tree: debian/ and what debian/rules installs.
stage_parent="$out_dir/stage"
stage="$stage_parent/strata-$version"
rm -rf "$stage_parent"
mkdir -p "$stage"
cp -r "$repo/packaging/deb/debian" "$stage/debian"
# The systemd units live in packaging/systemd/; dh_installsystemd finds them in debian/.
cp "$repo/packaging/systemd/strata.service" "$repo/packaging/systemd/strata.socket" "$stage/debian/"
cp "$repo/packaging/strata.conf" "$repo/packaging/strata.1" "$stage/"
cp "$binary" "$stage/strata"
if [[ -f $repo/models/strata-demo.gguf ]]; then
  cp "$repo/models/strata-demo.gguf" "$stage/"
fi

# cuBLAS as the binary resolves it (its RUNPATH, or the loader's path).
mapfile -t cublas < <(ldd "$binary" | awk '$1 ~ /^libcublas/ { print $1 " " $3 }')
if ((${#cublas[@]})); then
  mkdir "$stage/lib"
  for entry in "${cublas[@]}"; do
    read -r soname path <<<"$entry"
    [[ -f $path ]] || die "$binary needs $soname, which ldd cannot find"
    cp -L "$path" "$stage/lib/$soname"
  done
  echo "build-deb: CUDA build; shipping ${cublas[*]}"
else
  echo "build-deb: CPU-only build"
fi

(cd "$stage" && dpkg-buildpackage --build=binary --no-sign)
mkdir -p "$out_dir"
mv "$stage_parent"/strata*_"$version"_amd64.*deb "$out_dir/"
rm -rf "$stage_parent"
echo "build-deb: $out_dir/strata_${version}_amd64.deb"
