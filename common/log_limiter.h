// LogLimiter: keeps a log line that can repeat without end (a block that
// fails to load, during an I/O error storm that fails them all) to a bounded
// number of lines: the first n_burst occurrences are logged, then at most one
// per interval, which says how many were held back since the line before.
// After an interval without any occurrence the burst is allowed again.
//
// Threads: not thread-safe; one owner thread (or the owner's lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace strata {

class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    int64_t n_burst = 3;                                // logged before the limit starts
    Clock::duration interval = std::chrono::minutes(1);  // then at most one line per interval
  };

  LogLimiter() : LogLimiter(Options{}) {}
  explicit LogLimiter(Options options) : options_(options) {}

  // An occurrence at `now`: nullopt when its line must be dropped, else the
  // number of occurrences dropped since the last line that was let through.
  std::optional<int64_t> admit(Clock::time_point now = Clock::now());

  // " (N more like it since the last report)" for N > 0, else "": the end of
  // a line that admit() let through.
  static std::string held_back_note(int64_t n_held_back);

 private:
  Options options_;
  int64_t n_in_burst_ = 0;    // lines let through since the burst last refilled
  int64_t n_held_back_ = 0;   // occurrences dropped since the last line
  bool seen_ = false;         // any occurrence yet
  Clock::time_point last_seen_{};    // the latest occurrence
  Clock::time_point last_logged_{};  // the latest line let through
};

}  // namespace strata
