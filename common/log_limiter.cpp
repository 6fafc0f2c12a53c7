#include "common/log_limiter.h"

#include "common/str_cat.h"

namespace strata {

std::optional<int64_t> LogLimiter::admit(Clock::time_point now) {
  // A quiet interval ends the storm: the next one starts with a burst again.
  if (seen_ && now - last_seen_ >= options_.interval) n_in_burst_ = 0;
  seen_ = true;
  last_seen_ = now;
  const bool in_burst = n_in_burst_ < options_.n_burst;
  if (!in_burst && now - last_logged_ < options_.interval) {
    ++n_held_back_;
    return std::nullopt;
  }
  if (in_burst) ++n_in_burst_;
  last_logged_ = now;
  const int64_t n_held_back = n_held_back_;
  n_held_back_ = 0;
  return n_held_back;
}

std::string LogLimiter::held_back_note(int64_t n_held_back) {
  if (n_held_back <= 0) return "";
  return str_cat(" (", n_held_back, " more like it since the last report)");
}

}  // namespace strata
