# shellcheck shell=bash
# Checks for the packaging test's scripts (sourced). Paths are inside the
# Debian root $root, which the sourcing script sets, and owners are looked up
# there (the strata user exists only there). Each check prints what it saw; a
# failure stops the test.

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() {
  [[ $2 == "$3" ]] || fail "$1: got '$2', expected '$3'"
  echo "ok: $1: $3"
}

# expect_contains WHAT TEXT NEEDLE
expect_contains() {
  [[ $2 == *"$3"* ]] || fail "$1: '$3' not in: $2"
  echo "ok: $1 has '$3'"
}

# expect_node PATH TYPE MODE OWNER:GROUP, e.g. /usr/bin/strata "regular file" 755 root:root
expect_node() {
  local seen
  # shellcheck disable=SC2154  # $root comes from the sourcing script
  seen="$(chroot "$root" stat -c '%F|%a|%U:%G' "$1" 2>&1)" || fail "$1: $seen"
  expect_eq "$1" "$seen" "$2|$3|$4"
}

expect_absent() {
  [[ ! -e $root$1 && ! -L $root$1 ]] || fail "$1 should be gone"
  echo "ok: $1 is absent"
}
