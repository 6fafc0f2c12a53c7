// Logging to standard error (the journal under systemd). Thread-safe: one line
// is written with one call.
#pragma once

#include <string>
#include <string_view>

#include "common/str_cat.h"

namespace strata {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Lines below `level` are dropped. Set once at start-up from config.
void set_log_level(LogLevel level);
LogLevel log_level();
void log_line(LogLevel level, std::string_view message);

template <typename... Args>
void log_debug(const Args&... args) {
  if (log_level() <= LogLevel::kDebug) log_line(LogLevel::kDebug, str_cat(args...));
}
template <typename... Args>
void log_info(const Args&... args) {
  if (log_level() <= LogLevel::kInfo) log_line(LogLevel::kInfo, str_cat(args...));
}
template <typename... Args>
void log_warning(const Args&... args) {
  if (log_level() <= LogLevel::kWarning) log_line(LogLevel::kWarning, str_cat(args...));
}
template <typename... Args>
void log_error(const Args&... args) {
  log_line(LogLevel::kError, str_cat(args...));
}

}  // namespace strata
