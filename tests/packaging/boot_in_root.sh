#!/usr/bin/env bash
# Boots the Debian root ROOT, where the package is installed and a model
# configured, with a real systemd as its init (systemd-nspawn --boot, in a
# network namespace of its own, so 127.0.0.1:8080 is the container's), and
# uses the installed units as a user would:
#   - at boot strata.socket listens on /run/strata/strata.sock (0660
#     root:strata) and 127.0.0.1:8080, and strata.service is not started;
#   - the first connection starts strata.service, confined as the unit says and
#     run as strata; Type=notify makes it active once strata sends READY=1;
#   - it answers on the Unix socket and on TCP;
#   - `systemctl stop` ends it cleanly (exit 0, no restart), strata.socket
#     keeps listening, and the next connection starts it again.
# The host reaches the container's socket through /proc/PID/root, its loopback
# through nsenter --net, and runs systemctl and journalctl in it with nsenter.
# Exits 77 (ctest's skip code) when no systemd can boot here, saying why.
#   boot_in_root.sh ROOT   (as root; ROOT must not have /proc mounted)
set -euo pipefail

root="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/expect.sh"
command -v systemd-nspawn >/dev/null ||
  fail "systemd-nspawn is missing: scripts/install-deps installs Debian's systemd-container"

log="$(mktemp)"
nspawn=""
leader=""
cleanup() {
  if [[ -n $nspawn ]] && kill -0 "$nspawn" 2>/dev/null; then
    # The container's init first: killing it ends every process of the container,
    # which would outlive systemd-nspawn otherwise.
    if [[ -n $leader ]]; then kill -KILL "$leader" 2>/dev/null || true; fi
    kill -KILL "$nspawn"
    wait "$nspawn" 2>/dev/null || true
  fi
  rm -f "$log"
}
trap cleanup EXIT

# --register=no --keep-unit: no machined or host systemd needed.
systemd-nspawn --boot --directory="$root" --machine=strata-package-test --private-network \
  --register=no --keep-unit --quiet </dev/null >"$log" 2>&1 &
nspawn=$!

# The container's init: the child of systemd-nspawn once it runs systemd (it
# forks helpers that come and go before that).
for ((i = 0; i < 300; i++)); do
  leader="$(ps -o pid=,comm= --ppid "$nspawn" | awk '$2 == "systemd" { print $1; exit }' || true)"
  [[ -n $leader ]] && break
  kill -0 "$nspawn" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $leader ]]; then
  echo "skipped: systemd-nspawn cannot boot a container here:"
  tail -n 20 "$log"
  exit 77
fi
inside() { nsenter --target="$leader" --all "$@"; }
# Until its bus is up, systemctl cannot even ask.
for ((i = 0; i < 240; i++)); do
  state="$(timeout 120 nsenter --target="$leader" --all \
    systemctl is-system-running --wait 2>&1 || true)"
  [[ $state == *"Failed to connect to bus"* ]] || break
  kill -0 "$nspawn" 2>/dev/null || break
  sleep 0.5
done
case "$state" in
  running) ;;
  degraded)
    echo "the container's systemd is degraded:"
    inside systemctl --failed --no-legend || true
    ;;
  *)
    echo "skipped: no systemd runs in the container here (is-system-running: $state):"
    tail -n 20 "$log"
    exit 77
    ;;
esac
echo "ok: systemd booted the root ($state)"

socket="/proc/$leader/root/run/strata/strata.sock"
api() { curl --silent --show-error --fail --max-time 30 --unix-socket "$socket" "$@"; }
show() { inside systemctl show strata.service --value -p "$1"; }

expect_eq "strata.socket after boot" "$(inside systemctl is-active strata.socket || true)" active
expect_eq "strata.service after boot" "$(inside systemctl is-active strata.service || true)" \
  inactive
# systemd owns it (no SocketUser=): root, with the unit's SocketGroup= and SocketMode=.
expect_eq "/run/strata/strata.sock" "$(inside stat -c '%F|%a|%U:%G' /run/strata/strata.sock)" \
  "socket|660|root:strata"

# The first connection starts the service; /health answers 503 until the model is loaded.
started=$SECONDS
until api -o /dev/null http://strata/health 2>/dev/null; do
  if ((SECONDS - started >= 60)); then
    inside journalctl -u strata.service --no-pager | tail -n 30
    fail "strata.service did not come up in 60 s"
  fi
  sleep 0.5
done
echo "ok: the first connection started strata.service ($((SECONDS - started)) s to ready)"
expect_eq "strata.service" "$(inside systemctl is-active strata.service)" active
expect_eq "its status" "$(show StatusText)" "serving tiny"
main_pid="$(show MainPID)"
expect_eq "strata serve runs as" "$(inside stat -c %U "/proc/$main_pid")" strata
journal="$(inside journalctl -u strata.service --no-pager)"
expect_contains "the journal" "$journal" "listening on unix:/run/strata/strata.sock (from systemd)"
expect_contains "the journal" "$journal" "listening on a TCP socket (from systemd)"

reply="$(api http://strata/v1/chat/completions -H 'Content-Type: application/json' \
  -d '{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4}')"
expect_contains "POST /v1/chat/completions on the socket" "$reply" '"finish_reason"'
expect_contains "GET /health on 127.0.0.1:8080" \
  "$(nsenter --net="/proc/$leader/ns/net" curl -sSf --max-time 10 http://127.0.0.1:8080/health)" \
  '"status":"ok"'

inside systemctl stop strata.service 2>/dev/null
expect_eq "strata.service after systemctl stop" \
  "$(show ActiveState) $(show Result) exit $(show ExecMainStatus), $(show NRestarts) restarts" \
  "inactive success exit 0, 0 restarts"
expect_contains "the journal" "$(inside journalctl -u strata.service --no-pager)" "received SIGTERM"
expect_eq "strata.socket after the stop" "$(inside systemctl is-active strata.socket || true)" \
  active
restarted=$SECONDS
until api -o /dev/null http://strata/health 2>/dev/null; do
  ((SECONDS - restarted < 60)) || fail "the next connection did not start strata.service again"
  sleep 0.5
done
echo "ok: the next connection started strata.service again"

inside systemctl poweroff 2>/dev/null || true  # the bus may go before systemctl returns
for ((i = 0; i < 600; i++)); do
  kill -0 "$nspawn" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$nspawn" 2>/dev/null && fail "the container did not power off in 60 s"
wait "$nspawn" || true  # its exit status: it may complain about cleaning up /run on the host
nspawn=""
echo "ok: the container powered off"
