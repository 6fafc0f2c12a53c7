#include "common/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace strata {

#if STRATA_CRASH_POINTS
namespace {

struct CrashPlan {
  std::string point;
  long long at = 1;  // the pass that crashes, counted from 1
};

void say(const std::string& message) {
  // write(2): nothing buffered is lost to the kill that follows.
  const ssize_t ignored = write(STDERR_FILENO, message.data(), message.size());
  (void)ignored;
}

bool is_known(std::string_view point) {
  return std::ranges::find(kCrashPoints, point) != kCrashPoints.end();
}

// STRATA_CRASH_AT=NAME[@N]. Read here, not in the config: it is a test's
// instruction to this build, never a setting of the server.
std::optional<CrashPlan> read_plan() {
  const char* value = std::getenv("STRATA_CRASH_AT");
  if (value == nullptr || *value == '\0') return std::nullopt;
  std::string text = value;
  CrashPlan plan;
  const size_t at = text.find('@');
  plan.point = text.substr(0, at);
  if (at != std::string::npos) plan.at = std::atoll(text.c_str() + at + 1);
  if (!is_known(plan.point) || plan.at < 1) {
    say("strata: STRATA_CRASH_AT=" + text + " names no crash point (NAME[@N], N >= 1)\n");
    std::abort();
  }
  return plan;
}

}  // namespace

void crash_point(std::string_view point) {
  static const std::optional<CrashPlan> plan = read_plan();
  if (!is_known(point)) {
    say("strata: crash point " + std::string(point) + " is not in kCrashPoints\n");
    std::abort();
  }
  if (!plan || plan->point != point) return;
  static std::atomic<long long> n_passes{0};
  const long long pass = ++n_passes;
  if (pass != plan->at) return;
  say("strata: crash point " + plan->point + " reached (pass " + std::to_string(pass) +
      "); killing the process\n");
  kill(getpid(), SIGKILL);
}

#else

void crash_point(std::string_view) {}

#endif

}  // namespace strata
