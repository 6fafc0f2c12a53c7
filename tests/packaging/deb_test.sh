#!/usr/bin/env bash
# The Debian package, end to end: packages BINARY (the build's own strata, the
# one the other tests ran) with scripts/build-deb.sh, runs lintian, installs the
# .deb into a clean Debian 12 root, checks what it put where, edits the config
# as a user would, upgrades (conffile handling), checks the units with
# systemd-analyze, runs the installed strata as its service would
# (serve_in_root.sh), boots the root with systemd to use the units themselves
# (boot_in_root.sh), then removes and purges it.
#   deb_test.sh BINARY DEV_BINARY WORK_DIR   (as root: chroot, mount, debootstrap)
# DEV_BINARY is the build's strata-dev, which writes the test model.
set -euo pipefail

binary="$1"
dev_binary="$2"
work="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$here/expect.sh"
if [[ $(id -u) != 0 ]]; then
  echo "skipped: needs root (debootstrap, chroot, mount); CI runs as root"
  exit 77  # ctest's SKIP_RETURN_CODE
fi

root="$work/root"
cleanup() {
  if mountpoint -q "$root/proc"; then umount "$root/proc"; fi
  rm -rf "$work"
}
trap cleanup EXIT
cleanup
mkdir -p "$work"
started=$SECONDS
step() { echo "== $* ($((SECONDS - started)) s)"; }

step "build the package"
# No -dbgsym package: nothing here installs it, and a debug build's is 100 MB.
# gzip, not the release's xz: 2 minutes less for a CUDA build's 600 MB.
DEB_BUILD_OPTIONS=noddebs DPKG_DEB_COMPRESSOR_TYPE=gzip \
  "$repo/scripts/build-deb.sh" "$binary" "$work/deb" >"$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log"; fail "scripts/build-deb.sh failed"; }
deb="$(echo "$work"/deb/strata_*_amd64.deb)"
version="$(dpkg-deb -f "$deb" Version)"
echo "$(basename "$deb"): $(du -h "$deb" | cut -f1)"

step "lintian"
lintian_status=0
lintian --fail-on error --display-level '>=warning' "$deb" >"$work/lintian.log" 2>&1 || lintian_status=$?
grep -v 'running with root privileges' "$work/lintian.log" || true
((lintian_status == 0)) || fail "lintian reports errors"
echo "ok: lintian reports no errors"

step "a clean Debian 12 root with the package's dependencies"
# The first alternative of each dependency, as apt would choose: the root holds
# minbase and what the package declares, so a missing declaration fails below.
mapfile -t depends < <(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/ //g')
"$here/debian_root.sh" "$root" "${depends[@]}"
mount -t proc proc "$root/proc"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

# A GPU node owned by a group, as NVreg_DeviceFileGID makes it: strata must join.
in_root groupadd --system gpu-users
mknod -m 0660 "$root/dev/nvidia0" c 195 0
chroot "$root" chgrp gpu-users /dev/nvidia0

step "apt install ./$(basename "$deb")"
cp "$deb" "$root/tmp/"
in_root apt-get install -y -q -o Dpkg::Use-Pty=0 "/tmp/$(basename "$deb")" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "apt install failed"; }
rm "$root/tmp/$(basename "$deb")"
expect_eq "installed version" "$(in_root dpkg-query -W -f '${Version}' strata)" "$version"
expect_node /usr/bin/strata "regular file" 755 root:root
expect_node /usr/lib/systemd/system/strata.service "regular file" 644 root:root
expect_node /usr/lib/systemd/system/strata.socket "regular file" 644 root:root
expect_node /usr/lib/sysusers.d/strata.conf "regular file" 644 root:root
expect_node /etc/strata/strata.conf "regular file" 644 root:root
expect_node /usr/share/man/man1/strata.1.gz "regular file" 644 root:root
expect_node /usr/share/doc/strata/copyright "regular file" 644 root:root
expect_node /usr/share/doc/strata/changelog.gz "regular file" 644 root:root
if [[ -f $repo/models/strata-demo.gguf ]]; then
  expect_node /usr/share/strata/models/strata-demo.gguf "regular file" 644 root:root
fi
expect_node /var/lib/strata "directory" 750 strata:strata
expect_node /var/lib/strata/models "directory" 750 strata:strata
expect_contains "conffiles" "$(in_root dpkg-query -W -f '${Conffiles}' strata)" /etc/strata/strata.conf
expect_contains "the strata user" "$(in_root getent passwd strata)" ":/var/lib/strata:/usr/sbin/nologin"
(($(in_root id -u strata) < 1000)) || fail "strata is not a system user"
expect_eq "the strata user's group" "$(in_root id -gn strata)" strata
expect_eq "the strata user's groups" "$(in_root id -Gn strata)" "strata gpu-users"
rm "$root/dev/nvidia0"
expect_node /etc/systemd/system/sockets.target.wants/strata.socket "symbolic link" 777 root:root
echo "ok: strata.socket is enabled"
libraries="$(in_root ldd /usr/bin/strata)"
echo "$libraries"
expect_eq "libraries ldd cannot find" "$(grep 'not found' <<<"$libraries" || true)" ""
expect_eq "strata --version" "$(in_root strata --version)" "strata $version"

step "systemd-analyze"
"$here/unit_checks.sh" "$root"

step "a model added as the README says, and an edited config"
"$dev_binary" make-model --tokenizer llama3 --hidden 64 --layers 2 --heads 4 --kv-heads 2 \
  --ffn 128 --type q8_0 -o "$work/tiny.gguf" >/dev/null
install -m 0644 "$work/tiny.gguf" "$root/var/lib/strata/models/tiny.gguf"
sed -i 's|^model = .*|model = tiny.gguf|' "$root/etc/strata/strata.conf"
grep -qx 'model = tiny.gguf' "$root/etc/strata/strata.conf" || fail "strata.conf has no model line to edit"
cp "$root/etc/strata/strata.conf" "$work/edited.conf"
expect_edit_kept() {
  cmp -s "$root/etc/strata/strata.conf" "$work/edited.conf" ||
    fail "the edited strata.conf was not kept: $(diff "$work/edited.conf" "$root/etc/strata/strata.conf")"
  echo "ok: the edited /etc/strata/strata.conf is kept"
}

# Later versions of the package, made from this one by changing its version
# and, for the second, the shipped config.
repack() {  # repack VERSION CONFIG_LINE OUT
  local tree="$work/repack"
  rm -rf "$tree"
  dpkg-deb -R "$deb" "$tree"
  sed -i "s/^Version: .*/Version: $1/" "$tree/DEBIAN/control"
  if [[ -n $2 ]]; then
    echo "$2" >>"$tree/etc/strata/strata.conf"
    sed -i "s|^[0-9a-f]*  etc/strata/strata.conf|$(cd "$tree" && md5sum etc/strata/strata.conf)|" \
      "$tree/DEBIAN/md5sums"
  fi
  dpkg-deb -Znone -b "$tree" "$3" >/dev/null
  rm -rf "$tree"
}

step "upgrade: the package's config unchanged, the user's edit kept"
repack "$version+upgrade1" "" "$root/tmp/upgrade1.deb"
in_root apt-get install -y -q -o Dpkg::Use-Pty=0 /tmp/upgrade1.deb >"$work/upgrade1.log" 2>&1 ||
  { cat "$work/upgrade1.log"; fail "upgrade failed"; }
expect_eq "version" "$(in_root dpkg-query -W -f '${Version}' strata)" "$version+upgrade1"
expect_edit_kept
expect_absent /etc/strata/strata.conf.dpkg-dist

step "upgrade: both changed the config; the user's is kept, the new one beside it"
repack "$version+upgrade2" "# upgrade2" "$root/tmp/upgrade2.deb"
in_root apt-get install -y -q -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-confdef \
  -o Dpkg::Options::=--force-confold /tmp/upgrade2.deb >"$work/upgrade2.log" 2>&1 ||
  { cat "$work/upgrade2.log"; fail "upgrade failed"; }
rm "$root"/tmp/upgrade*.deb
expect_edit_kept
expect_contains "strata.conf.dpkg-dist" "$(cat "$root/etc/strata/strata.conf.dpkg-dist")" "# upgrade2"

step "strata serve as the strata user, with the installed config"
"$here/serve_in_root.sh" "$root"

step "strata.socket and strata.service under a real systemd (systemd-nspawn --boot)"
umount "$root/proc"  # the container mounts its own
boot_status=0
"$here/boot_in_root.sh" "$root" || boot_status=$?
mount -t proc proc "$root/proc"
((boot_status == 0 || boot_status == 77)) || fail "the installed units do not work under systemd"

step "apt remove: the program goes, config and state stay"
in_root apt-get remove -y -q -o Dpkg::Use-Pty=0 strata >"$work/remove.log" 2>&1 ||
  { cat "$work/remove.log"; fail "remove failed"; }
expect_absent /usr/bin/strata
expect_absent /usr/lib/systemd/system/strata.socket
expect_node /etc/strata/strata.conf "regular file" 644 root:root
expect_node /var/lib/strata/models/tiny.gguf "regular file" 644 root:root

step "apt purge: nothing left but the user"
in_root apt-get purge -y -q -o Dpkg::Use-Pty=0 strata >"$work/purge.log" 2>&1 ||
  { cat "$work/purge.log"; fail "purge failed"; }
for path in /etc/strata /var/lib/strata /var/cache/strata /run/strata \
  /etc/systemd/system/sockets.target.wants/strata.socket /usr/lib/strata; do
  expect_absent "$path"
done
expect_eq "dpkg's record of strata" "$(in_root dpkg-query -W -f '${Status}' strata 2>&1 || true)" \
  "dpkg-query: no packages found matching strata"

if ((boot_status == 77)); then
  echo "skipped: every step passed but the one under systemd, which cannot boot here (above)"
  exit 77
fi
step "passed"
