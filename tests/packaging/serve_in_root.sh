#!/usr/bin/env bash
# Runs the installed strata as its service would, in the Debian root ROOT where
# the package is installed (and /proc mounted). systemd does not run there, so
# this does what it would from the installed strata.service: ExecStart= as
# User=, with the installed /etc/strata/strata.conf, after making the
# StateDirectory=, CacheDirectory= and RuntimeDirectory= folders and naming them
# in the environment; in a network namespace of its own, so that port 8080 is
# free. Then it talks to strata over the Unix socket (curl), checks who may
# connect, and stops it with SIGTERM, which must end it cleanly (exit 0).
#   serve_in_root.sh ROOT
set -euo pipefail

root="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/expect.sh"
socket="$root/run/strata/strata.sock"
log="$(mktemp)"
pid=""
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  rm -f "$log"
}
trap cleanup EXIT

unit="$root/usr/lib/systemd/system/strata.service"
setting() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }
user="$(setting User)"
group="$(setting Group)"
state=/var/lib/"$(setting StateDirectory)"
cache=/var/cache/"$(setting CacheDirectory)"
runtime=/run/"$(setting RuntimeDirectory)"
read -ra exec_start <<<"$(setting ExecStart)"
chroot "$root" install -d -o "$user" -g "$group" -m "$(setting CacheDirectoryMode)" "$cache"
chroot "$root" install -d -o "$user" -g "$group" -m "$(setting RuntimeDirectoryMode)" "$runtime"

# unshare, chroot, setpriv and env each exec the next: $! is strata's pid.
unshare --net sh -c 'ip link set lo up && exec chroot "$@"' sh "$root" \
  setpriv --reuid="$user" --regid="$group" --init-groups \
  env -i PATH=/usr/bin:/bin STATE_DIRECTORY="$state" CACHE_DIRECTORY="$cache" \
  RUNTIME_DIRECTORY="$runtime" "${exec_start[@]}" >"$log" 2>&1 &
pid=$!

api() { curl --silent --show-error --fail --max-time 30 --unix-socket "$socket" "$@"; }

# Up once /health answers 200: the model is loaded.
for ((i = 0; i < 120; i++)); do
  kill -0 "$pid" 2>/dev/null || { cat "$log"; fail "strata serve exited at start"; }
  if [[ -S $socket ]] && api -o /dev/null http://strata/health 2>/dev/null; then break; fi
  sleep 0.5
done
api -o /dev/null http://strata/health || { cat "$log"; fail "strata serve is not ready after 60 s"; }

expect_eq "strata serve runs as" "$(stat -c %u "/proc/$pid")" "$(chroot "$root" id -u "$user")"
expect_node /run/strata/strata.sock socket 660 strata:strata
expect_contains "the log" "$(cat "$log")" "/var/lib/strata/models/tiny.gguf"
expect_contains "GET /v1/models" "$(api http://strata/v1/models)" '"id":"tiny"'
reply="$(api http://strata/v1/chat/completions -H 'Content-Type: application/json' \
  -d '{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4}')"
expect_contains "POST /v1/chat/completions" "$reply" '"finish_reason"'
expect_contains "GET /health on 127.0.0.1:8080" \
  "$(nsenter --net="/proc/$pid/ns/net" curl -sSf --max-time 10 http://127.0.0.1:8080/health)" '"status":"ok"'

# Who may use the socket: a member of the strata group, and nobody else. The
# README says `adduser NAME strata`; minbase has usermod.
connect='use IO::Socket::UNIX; IO::Socket::UNIX->new(Peer => "/run/strata/strata.sock") or die "$!\n"'
chroot "$root" sh -c 'id alice >/dev/null 2>&1 || useradd alice; usermod -a -G strata alice'
chroot "$root" setpriv --reuid=alice --regid=alice --init-groups perl -e "$connect" ||
  fail "a member of the strata group cannot connect"
echo "ok: a member of the strata group connects"
if chroot "$root" setpriv --reuid=nobody --regid=nogroup --clear-groups perl -e "$connect" 2>/dev/null; then
  fail "a user outside the strata group connected"
fi
echo "ok: a user outside the strata group cannot connect"

kill -TERM "$pid"
for ((i = 0; i < 60; i++)); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
kill -0 "$pid" 2>/dev/null && { cat "$log"; fail "strata serve still runs 30 s after SIGTERM"; }
status=0
wait "$pid" || status=$?
pid=""
expect_eq "exit status after SIGTERM" "$status" 0
expect_contains "the log" "$(cat "$log")" "received SIGTERM"
