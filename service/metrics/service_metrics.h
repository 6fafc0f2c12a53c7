// ServiceMetrics: the server's Prometheus metrics, rendered for `GET /metrics`. Owns what
// the HTTP layer measures (requests by route and status, latency histograms); the
// engine's numbers come in at render time as EngineGauges, plain data the caller copies
// from the engine's stats, so this unit knows nothing of the engine.
//
// count_request(), observe_*() and render(): any thread, concurrently.
#pragma once

#include <cstdint>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "service/metrics/histogram.h"

namespace strata::metrics {

// The KV cache of one storage tier ("gpu", "host", "disk").
struct TierGauge {
  std::string tier;
  int64_t blocks_used = 0;    // referenced by sequences' block tables (disk: being moved)
  int64_t blocks_cached = 0;  // published in the prefix cache (used or idle); disk: stored
  int64_t blocks_total = 0;   // capacity
  int64_t block_hits = 0;     // total blocks of prompts served from this tier
};

// Bytes moved between two tiers, in one direction, in total.
struct TierMove {
  std::string from;
  std::string to;
  int64_t bytes = 0;
};

// A snapshot of the engine (EngineStats, per tier). Totals count since the engine
// started; the rest are now.
struct EngineGauges {
  int64_t running = 0;               // sequences in the running batch
  int64_t waiting = 0;               // sequences queued for admission
  int64_t prompt_tokens = 0;         // total prompt tokens admitted
  int64_t cached_prompt_tokens = 0;  // total of those served from the prefix cache
  int64_t generated_tokens = 0;      // total tokens sampled
  int64_t preemptions = 0;           // total sequences preempted to free KV blocks
  int64_t steps = 0;                 // total engine steps (forward passes run)
  std::vector<TierGauge> tiers;
  std::vector<TierMove> moves;
  int64_t moves_in_flight = 0;    // block moves between tiers queued or running
  // Off without a disk tier, or from a failed write (full, read-only, failing
  // or vanished folder) until a retry succeeds.
  bool disk_writes_enabled = false;
  int64_t disk_write_failures = 0;  // total blocks whose write to the disk tier failed
  int64_t disk_reopens = 0;         // total times the disk cache folder was opened afresh
};

class ServiceMetrics {
 public:
  ServiceMetrics();

  // strata_http_requests_total{endpoint, status}. `endpoint` must come from a fixed set
  // (the router's matched route, or "other"): each value is a time series kept forever.
  void count_request(std::string_view endpoint, int status);

  // A generation cancelled because its client went away (a stop button, a
  // closed connection): strata_client_cancels_total.
  void count_client_cancel() { client_cancels_.fetch_add(1, std::memory_order_relaxed); }

  // Seconds from the request's arrival to its first generated token.
  void observe_time_to_first_token(double seconds);
  // Seconds between consecutive generated tokens of one request.
  void observe_inter_token_latency(double seconds);
  // Seconds from arrival to the last token of a generation request.
  void observe_request_duration(double seconds);

  // The exposition text (format 0.0.4). `engine` is null while the model loads: the
  // engine's series are then left out.
  std::string render(const EngineGauges* engine) const;

 private:
  mutable std::mutex requests_mutex_;  // guards requests_total_
  // endpoint -> HTTP status -> requests answered. std::less<> finds by string_view.
  std::map<std::string, std::map<int, uint64_t>, std::less<>> requests_total_;

  std::atomic<uint64_t> client_cancels_{0};
  Histogram time_to_first_token_;
  Histogram inter_token_latency_;
  Histogram request_duration_;
};

}  // namespace strata::metrics
