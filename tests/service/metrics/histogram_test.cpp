#include "service/metrics/histogram.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace strata::metrics {
namespace {

TEST(HistogramTest, RendersCumulativeBucketsSumAndCount) {
  Histogram histogram({0.25, 0.5, 1});
  // Binary fractions, so the sum is exact.
  for (double value : {0.125, 0.25, 0.375, 0.5, 0.75, 3.0}) histogram.observe(value);
  std::string out;
  histogram.render(out, "latency_seconds", "Latency.");
  // A value on a bound counts in that bound's bucket (le is "less or equal").
  EXPECT_EQ(out,
            "# HELP latency_seconds Latency.\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{le=\"0.25\"} 2\n"
            "latency_seconds_bucket{le=\"0.5\"} 4\n"
            "latency_seconds_bucket{le=\"1\"} 5\n"
            "latency_seconds_bucket{le=\"+Inf\"} 6\n"
            "latency_seconds_sum 5\n"
            "latency_seconds_count 6\n");
}

TEST(HistogramTest, EmptyHistogramRendersZeros) {
  Histogram histogram({1});
  std::string out;
  histogram.render(out, "h", "H.");
  EXPECT_EQ(out,
            "# HELP h H.\n# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n");
}

TEST(HistogramTest, DropsNaN) {
  Histogram histogram({1});
  histogram.observe(std::numeric_limits<double>::quiet_NaN());
  histogram.observe(2);
  std::string out;
  histogram.render(out, "h", "H.");
  EXPECT_NE(out.find("h_bucket{le=\"+Inf\"} 1\nh_sum 2\nh_count 1\n"), std::string::npos) << out;
}

TEST(HistogramTest, ConcurrentObservationsAreAllCounted) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100'000;
  Histogram histogram({0.5, 1.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    // Even threads observe 1 (second bucket), odd threads 2 (+Inf): sums stay exact.
    threads.emplace_back([&histogram, t] {
      for (int i = 0; i < kPerThread; ++i) histogram.observe(t % 2 == 0 ? 1.0 : 2.0);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::string out;
  histogram.render(out, "h", "H.");
  EXPECT_NE(out.find("h_bucket{le=\"0.5\"} 0\n"
                     "h_bucket{le=\"1.5\"} 400000\n"
                     "h_bucket{le=\"+Inf\"} 800000\n"
                     "h_sum 1200000\n"
                     "h_count 800000\n"),
            std::string::npos)
      << out;
}

TEST(HistogramDeathTest, RejectsUnsortedBounds) {
  EXPECT_DEATH(Histogram({1, 0.5}), "strictly increasing");
}

}  // namespace
}  // namespace strata::metrics
