#!/usr/bin/env bash
# systemd-analyze on the units as installed in ROOT (systemd does not run in
# that root, so they are checked from outside): `verify` (syntax, and the
# programs, units and man page they name exist there) and `security` (the
# service's exposure must be 2.0 or lower; --threshold counts tenths).
#   unit_checks.sh ROOT
set -euo pipefail

root="$1"
# verify runs man(1) for Documentation=man:strata(1): point it at the root's pages.
MANPATH="$root/usr/share/man" systemd-analyze verify --root="$root" strata.socket strata.service
systemd-analyze security --offline=true --threshold=20 --root="$root" --no-pager strata.service |
  tail -n 1
