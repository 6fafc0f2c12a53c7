// LoadCostModel: loads until a prefill rate is known, then whichever is
// faster by the rates learned, which follow the latest observations.
#include "tiering/load_cost_model.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(LoadCostModelTest, LoadsWhileThePrefillRateIsUnknown) {
  LoadCostModel model;
  EXPECT_FALSE(model.prefill_tokens_per_s().has_value());
  EXPECT_TRUE(model.load_wins(int64_t{1} << 40, 1));
  EXPECT_DOUBLE_EQ(model.disk_read_bytes_per_s(), LoadCostOptions{}.disk_read_bytes_per_s);
}

TEST(LoadCostModelTest, ShortPrefillStepsAreNotObserved) {
  LoadCostModel model({.min_prefill_tokens = 32});
  model.observe_prefill(8, 0.001);  // a decode step: latency, not throughput
  EXPECT_FALSE(model.prefill_tokens_per_s().has_value());
  model.observe_prefill(64, 0.01);
  EXPECT_DOUBLE_EQ(*model.prefill_tokens_per_s(), 6400.0);
}

TEST(LoadCostModelTest, PicksTheFasterWayByTheLearnedRates) {
  LoadCostModel model({.disk_read_bytes_per_s = 1e9, .load_latency_s = 1e-3});
  model.observe_prefill(1000, 0.1);  // 10k tokens/s: 16 tokens take 1.6 ms
  // 16 tokens of 64 KiB: 1 ms + 65.5 us to load, 1.6 ms to compute.
  EXPECT_TRUE(model.load_wins(65536, 16));
  EXPECT_NEAR(model.load_seconds(65536), 1e-3 + 65536e-9, 1e-12);
  EXPECT_NEAR(*model.recompute_seconds(16), 1.6e-3, 1e-12);
  // A GPU-like prefill rate: computing wins.
  for (int i = 0; i < 20; ++i) model.observe_prefill(100000, 0.1);  // 1M tokens/s
  EXPECT_FALSE(model.load_wins(65536, 16));
  // A fast disk observed: loading a long prompt wins again.
  for (int i = 0; i < 20; ++i) model.observe_load(int64_t{10} << 30, 1.0);  // ~10.7 GB/s
  EXPECT_TRUE(model.load_wins(int64_t{64} << 20, 16384));  // 7.3 ms against 16.4 ms
}

TEST(LoadCostModelTest, RatesFollowTheLatestObservations) {
  LoadCostModel model;
  model.observe_load(1000, 1.0);
  for (int i = 0; i < 40; ++i) model.observe_load(1000000, 1.0);
  EXPECT_NEAR(model.disk_read_bytes_per_s(), 1e6, 1e6 * 1e-3);
  model.observe_load(0, 1.0);   // ignored
  model.observe_load(100, 0.0);  // ignored
  EXPECT_NEAR(model.disk_read_bytes_per_s(), 1e6, 1e6 * 1e-3);
}

}  // namespace
}  // namespace strata
