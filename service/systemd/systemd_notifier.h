// SystemdNotifier: tells systemd how `strata serve` is doing, through sd_notify(3): ready
// once the model is loaded, a one-line status, stopping, more start-up time while a large
// model loads, and watchdog pings. Built once in main; every call is a no-op when not run
// by systemd (NOTIFY_SOCKET unset), and a failed send never throws: it logs one warning.
//
// NOTIFY_SOCKET stays set (unset_environment = 0): we notify for the whole life of the
// process, from several threads, and sd_notify reads the variable on every call; unsetting
// it after the first message would silence the rest, and unsetenv races with those reads.
// A child process that inherits it cannot speak for us: systemd's default
// NotifyAccess=main ignores messages from any process but the main one.
//
// Any thread, concurrently: sd_notify opens a socket per call and shares no state, as
// long as nothing changes the environment after start-up.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace strata::systemd {

class SystemdNotifier {
 public:
  // Reads NOTIFY_SOCKET once (the one environment read outside config: the environment
  // is how systemd's protocol works).
  SystemdNotifier();

  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  // Started by systemd with Type=notify (NOTIFY_SOCKET set).
  bool active() const { return active_; }

  // "READY=1\nSTATUS=<status>": start-up is done; Type=notify units count as started.
  void ready(std::string_view status);
  // "STOPPING=1": shutdown has begun.
  void stopping();
  // "STATUS=<status>": shown by `systemctl status`. A newline in `status` becomes a space,
  // so it cannot start another assignment.
  void status(std::string_view status);
  // "EXTEND_TIMEOUT_USEC=<n>": give start-up (or stop) `extra` more time from now, past
  // TimeoutStartSec=, while a large model loads.
  void extend_timeout(std::chrono::microseconds extra);

  // WatchdogSec= of the unit when it is meant for this process (WATCHDOG_USEC, and
  // WATCHDOG_PID is ours or unset); the caller calls watchdog() every interval / 2.
  std::optional<std::chrono::microseconds> watchdog_interval() const;
  // "WATCHDOG=1": still alive.
  void watchdog();

 private:
  void send(const std::string& state);

  const bool active_;
  std::atomic<bool> warned_{false};  // a failed send has been logged
};

}  // namespace strata::systemd
