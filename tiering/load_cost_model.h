// LoadCostModel: whether loading a prompt's blocks from the disk tier beats
// computing them again (DESIGN.md, "Tiers": loading is chosen only where it
// wins). A load costs its bytes over the disk's read rate plus a fixed
// latency (a trip through the tiering thread and an engine wake-up); a
// recompute costs its tokens over the prefill rate. Both rates are learned
// online from what the engine observes — every completed load, every step
// that prefilled enough tokens to measure throughput — as exponentially
// decayed sums, so they follow the machine (a GPU prefills a 1B model far
// faster than an SSD reads its KV; a CPU the other way round).
//
// Before any prefill has been observed the prefill rate is unknown and a
// load is always chosen: on the first request after a restart the disk is
// all there is to go on.
//
// Threads: the engine thread only.
#pragma once

#include <cstdint>
#include <optional>

namespace strata {

struct LoadCostOptions {
  double disk_read_bytes_per_s = 1e9;  // until a load is observed: a modest SSD
  double load_latency_s = 1e-3;        // fixed cost of one round of loads
  // Prefill steps with fewer new tokens than this are latency-bound and say
  // little about throughput: not observed.
  int64_t min_prefill_tokens = 32;
};

class LoadCostModel {
 public:
  explicit LoadCostModel(const LoadCostOptions& options = {});

  void observe_load(int64_t bytes, double seconds);
  void observe_prefill(int64_t tokens, double seconds);

  double disk_read_bytes_per_s() const;
  std::optional<double> prefill_tokens_per_s() const;  // nullopt until observed

  double load_seconds(int64_t bytes) const;
  // nullopt while the prefill rate is unknown.
  std::optional<double> recompute_seconds(int64_t tokens) const;
  // Load `bytes` or recompute `tokens`?
  bool load_wins(int64_t bytes, int64_t tokens) const;

 private:
  // Decayed sums: each observation counts for 1, the previous ones for kDecay as much.
  static constexpr double kDecay = 0.8;
  struct Rate {
    double amount = 0;
    double seconds = 0;
    void add(double a, double s) {
      amount = amount * kDecay + a;
      seconds = seconds * kDecay + s;
    }
  };
  LoadCostOptions options_;
  Rate disk_;
  Rate prefill_;
};

}  // namespace strata
