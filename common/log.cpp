#include "common/log.h"

#include <atomic>
#include <cstdio>

namespace strata {
namespace {

// The one process-wide setting: written at start-up, read everywhere.
std::atomic<LogLevel> g_log_level{LogLevel::kInfo};

const char* level_prefix(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug: ";
    case LogLevel::kInfo: return "";
    case LogLevel::kWarning: return "warning: ";
    case LogLevel::kError: return "error: ";
  }
  return "";
}

}  // namespace

void set_log_level(LogLevel level) { g_log_level.store(level, std::memory_order_relaxed); }

LogLevel log_level() { return g_log_level.load(std::memory_order_relaxed); }

void log_line(LogLevel level, std::string_view message) {
  if (level < log_level()) return;
  std::string line = str_cat("strata: ", level_prefix(level), message, "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace strata
