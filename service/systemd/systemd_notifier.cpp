#include "service/systemd/systemd_notifier.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/log.h"

namespace strata::systemd {
namespace {

// `text` on one line: sd_notify's message is newline-separated assignments.
std::string one_line(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  return line;
}

}  // namespace

SystemdNotifier::SystemdNotifier() : active_(std::getenv("NOTIFY_SOCKET") != nullptr) {}

void SystemdNotifier::ready(std::string_view status) {
  send("READY=1\nSTATUS=" + one_line(status));
}

void SystemdNotifier::stopping() { send("STOPPING=1"); }

void SystemdNotifier::status(std::string_view status) { send("STATUS=" + one_line(status)); }

void SystemdNotifier::extend_timeout(std::chrono::microseconds extra) {
  send("EXTEND_TIMEOUT_USEC=" + std::to_string(extra.count()));
}

std::optional<std::chrono::microseconds> SystemdNotifier::watchdog_interval() const {
  uint64_t usec = 0;
  const int r = sd_watchdog_enabled(/*unset_environment=*/0, &usec);
  if (r < 0) {
    log_warning(
        "systemd: ignoring the watchdog settings: WATCHDOG_USEC or WATCHDOG_PID is "
        "malformed (",
        std::strerror(-r), ")");
  }
  if (r <= 0) return std::nullopt;
  return std::chrono::microseconds(usec);
}

void SystemdNotifier::watchdog() { send("WATCHDOG=1"); }

void SystemdNotifier::send(const std::string& state) {
  if (!active_) return;
  const int r = sd_notify(/*unset_environment=*/0, state.c_str());
  if (r >= 0) return;
  // Once: a broken socket would otherwise log on every watchdog ping.
  if (!warned_.exchange(true)) {
    log_warning("systemd: could not notify the service manager (", std::strerror(-r),
                "); it will not see readiness or status (further failures are not logged)");
  }
}

}  // namespace strata::systemd
