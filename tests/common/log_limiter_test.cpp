#include "common/log_limiter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>

namespace strata {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(LogLimiterTest, BurstThenOneLinePerIntervalCountingTheRest) {
  LogLimiter limiter(LogLimiter::Options{.n_burst = 3, .interval = seconds(60)});
  const LogLimiter::Clock::time_point t0{};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limiter.admit(t0 + milliseconds(i)), std::optional<int64_t>(0)) << "burst " << i;
  }
  // A storm: one occurrence per 10 ms for 130 s.
  int64_t n_logged = 0;
  int64_t n_reported_held = 0;
  for (int i = 3; i < 13000; ++i) {
    if (std::optional<int64_t> held = limiter.admit(t0 + milliseconds(10 * i))) {
      ++n_logged;
      n_reported_held += *held;
    }
  }
  EXPECT_EQ(n_logged, 2) << "one line a minute after the burst";
  // Every occurrence is either logged or counted in a later line, but for
  // those after the last line.
  EXPECT_GT(n_reported_held, 11000);
  EXPECT_LE(n_reported_held + n_logged, 13000 - 3);
}

TEST(LogLimiterTest, AQuietIntervalRefillsTheBurst) {
  LogLimiter limiter(LogLimiter::Options{.n_burst = 2, .interval = seconds(10)});
  const LogLimiter::Clock::time_point t0{};
  EXPECT_TRUE(limiter.admit(t0).has_value());
  EXPECT_TRUE(limiter.admit(t0 + seconds(1)).has_value());
  EXPECT_FALSE(limiter.admit(t0 + seconds(2)).has_value());
  EXPECT_FALSE(limiter.admit(t0 + seconds(3)).has_value());
  // Quiet for an interval: a new storm is reported from its start, with the
  // count of the old one's dropped lines.
  EXPECT_EQ(limiter.admit(t0 + seconds(20)), std::optional<int64_t>(2));
  EXPECT_EQ(limiter.admit(t0 + seconds(21)), std::optional<int64_t>(0));
  EXPECT_FALSE(limiter.admit(t0 + seconds(22)).has_value());
}

TEST(LogLimiterTest, HeldBackNoteOnlyWhenSomethingWasHeldBack) {
  EXPECT_EQ(LogLimiter::held_back_note(0), "");
  EXPECT_EQ(LogLimiter::held_back_note(7), " (7 more like it since the last report)");
}

}  // namespace
}  // namespace strata
