// Histogram: a Prometheus histogram with fixed bucket upper bounds, for latencies
// (time to first token, inter-token latency, request duration), in seconds.
//
// Lock-free: observe() runs once per generated token on the Asio threads, so it is two
// relaxed atomic adds (bucket, sum) and no lock shared with /metrics scrapes. The count
// is not stored: render() adds up the buckets, so _count always equals the +Inf bucket
// even while observations land mid-render (the sum may then lag by those observations,
// which Prometheus tolerates; a mutex would make it exact at the cost of contention).
//
// observe() and render(): any thread, concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::metrics {

class Histogram {
 public:
  // `upper_bounds`: finite and strictly increasing; the +Inf bucket is implicit.
  explicit Histogram(std::vector<double> upper_bounds);

  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Counts `value` in the first bucket whose bound is >= value (Prometheus's `le`).
  // NaN is dropped: it would turn the sum into NaN for the rest of the process.
  void observe(double value);

  // Appends the family: # HELP, # TYPE name histogram, name_bucket{le="..."} with
  // cumulative counts up to le="+Inf", name_sum, name_count.
  void render(std::string& out, std::string_view name, std::string_view help) const;

 private:
  const std::vector<double> upper_bounds_;  // (n) sorted, without +Inf
  // (n + 1) observations per bucket, not cumulative; the last is the +Inf bucket.
  std::vector<std::atomic<uint64_t>> bucket_counts_;
  std::atomic<double> sum_{0.0};
};

}  // namespace strata::metrics
