#include "service/metrics/service_metrics.h"

#include <string>

#include "service/metrics/text_format.h"

namespace strata::metrics {
namespace {

// Bucket bounds in seconds, roughly 1-2.5-5 per decade over the range that matters.
// Time to first token: a cached prompt (10 ms) to a long prefill behind a queue (1 min).
const std::vector<double> kTimeToFirstTokenBounds = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                     2.5,  5,     10,   20,  40,   60};
// Inter-token latency: a fast GPU decode (1 ms) to a CPU step stalled by prefills (2 s).
const std::vector<double> kInterTokenLatencyBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,   0.25,   0.5,   1,    2};
// Request duration: a one-token answer to a long generation on a CPU (30 min).
const std::vector<double> kRequestDurationBounds = {0.1, 0.25, 0.5, 1,   2.5, 5,   10,
                                                    25,  60,   120, 300, 600, 1800};

void write_counter(std::string& out, std::string_view name, std::string_view help, int64_t value) {
  write_family_header(out, name, help, MetricType::kCounter);
  write_sample(out, name, {}, static_cast<double>(value));
}

void write_gauge(std::string& out, std::string_view name, std::string_view help, double value) {
  write_family_header(out, name, help, MetricType::kGauge);
  write_sample(out, name, {}, value);
}

// One gauge family with a sample per tier; `field` picks the tier's value.
void write_tier_gauge(std::string& out, std::string_view name, std::string_view help,
                      const std::vector<TierGauge>& tiers, int64_t TierGauge::*field) {
  write_family_header(out, name, help, MetricType::kGauge);
  for (const TierGauge& tier : tiers) {
    write_sample(out, name, {{"tier", tier.tier}}, static_cast<double>(tier.*field));
  }
}

void write_tier_counter(std::string& out, std::string_view name, std::string_view help,
                        const std::vector<TierGauge>& tiers) {
  write_family_header(out, name, help, MetricType::kCounter);
  for (const TierGauge& tier : tiers) {
    write_sample(out, name, {{"tier", tier.tier}}, static_cast<double>(tier.block_hits));
  }
}

void write_move_counter(std::string& out, const std::vector<TierMove>& moves) {
  constexpr std::string_view kName = "strata_kv_bytes_moved_total";
  write_family_header(out, kName, "KV cache bytes moved between tiers.", MetricType::kCounter);
  for (const TierMove& move : moves) {
    write_sample(out, kName, {{"from", move.from}, {"to", move.to}},
                 static_cast<double>(move.bytes));
  }
}

void write_engine(std::string& out, const EngineGauges& engine) {
  write_counter(out, "strata_prompt_tokens_total", "Prompt tokens of admitted requests.",
                engine.prompt_tokens);
  write_counter(out, "strata_cached_prompt_tokens_total",
                "Prompt tokens served from the prefix cache.", engine.cached_prompt_tokens);
  write_counter(out, "strata_generation_tokens_total", "Tokens generated.",
                engine.generated_tokens);
  write_counter(out, "strata_preemptions_total", "Sequences preempted to free KV cache blocks.",
                engine.preemptions);
  write_counter(out, "strata_engine_steps_total", "Engine steps (forward passes) run.",
                engine.steps);
  write_gauge(out, "strata_sequences_running", "Sequences in the running batch.",
              static_cast<double>(engine.running));
  write_gauge(out, "strata_sequences_waiting", "Sequences waiting for admission.",
              static_cast<double>(engine.waiting));
  write_tier_gauge(out, "strata_kv_blocks_used", "KV cache blocks referenced by sequences.",
                   engine.tiers, &TierGauge::blocks_used);
  write_tier_gauge(out, "strata_kv_blocks_cached", "KV cache blocks published in the prefix cache.",
                   engine.tiers, &TierGauge::blocks_cached);
  write_tier_gauge(out, "strata_kv_blocks_total", "KV cache blocks in the tier.", engine.tiers,
                   &TierGauge::blocks_total);
  write_tier_counter(out, "strata_kv_block_hits_total",
                     "Prompt KV blocks served from the tier instead of computed.", engine.tiers);
  write_move_counter(out, engine.moves);
  write_gauge(out, "strata_kv_moves_in_flight", "KV block moves between tiers queued or running.",
              static_cast<double>(engine.moves_in_flight));
  write_gauge(out, "strata_kv_disk_writes_enabled",
              "1 while KV blocks are written to the disk tier (0 without one, or while its "
              "writes fail: full, read-only, failing or vanished folder; retried).",
              engine.disk_writes_enabled ? 1.0 : 0.0);
  write_counter(out, "strata_kv_disk_write_failures_total",
                "KV blocks whose write to the disk tier failed (or was refused while off).",
                engine.disk_write_failures);
  write_counter(out, "strata_kv_disk_reopens_total",
                "Times the disk cache folder, deleted or replaced while serving, was opened "
                "afresh.",
                engine.disk_reopens);
  const double hit_ratio = engine.prompt_tokens > 0
                               ? static_cast<double>(engine.cached_prompt_tokens) /
                                     static_cast<double>(engine.prompt_tokens)
                               : 0.0;
  write_gauge(out, "strata_prefix_cache_hit_ratio",
              "Fraction of prompt tokens served from the prefix cache (0 before any).", hit_ratio);
}

}  // namespace

ServiceMetrics::ServiceMetrics()
    : time_to_first_token_(kTimeToFirstTokenBounds),
      inter_token_latency_(kInterTokenLatencyBounds),
      request_duration_(kRequestDurationBounds) {}

void ServiceMetrics::count_request(std::string_view endpoint, int status) {
  std::lock_guard lock(requests_mutex_);
  auto it = requests_total_.find(endpoint);
  if (it == requests_total_.end()) it = requests_total_.try_emplace(std::string(endpoint)).first;
  ++it->second[status];
}

void ServiceMetrics::observe_time_to_first_token(double seconds) {
  time_to_first_token_.observe(seconds);
}

void ServiceMetrics::observe_inter_token_latency(double seconds) {
  inter_token_latency_.observe(seconds);
}

void ServiceMetrics::observe_request_duration(double seconds) {
  request_duration_.observe(seconds);
}

std::string ServiceMetrics::render(const EngineGauges* engine) const {
  std::string out;
  write_family_header(out, "strata_http_requests_total", "HTTP requests answered.",
                      MetricType::kCounter);
  {
    std::lock_guard lock(requests_mutex_);
    for (const auto& [endpoint, by_status] : requests_total_) {
      for (const auto& [status, count] : by_status) {
        write_sample(out, "strata_http_requests_total",
                     {{"endpoint", endpoint}, {"status", std::to_string(status)}},
                     static_cast<double>(count));
      }
    }
  }
  write_counter(out, "strata_client_cancels_total",
                "Generations cancelled because the client went away (stop, disconnect).",
                static_cast<int64_t>(client_cancels_.load(std::memory_order_relaxed)));
  time_to_first_token_.render(out, "strata_time_to_first_token_seconds",
                              "Seconds from a request's arrival to its first token.");
  inter_token_latency_.render(out, "strata_inter_token_latency_seconds",
                              "Seconds between consecutive tokens of a request.");
  request_duration_.render(out, "strata_request_duration_seconds",
                           "Seconds from a generation request's arrival to its last token.");
  if (engine != nullptr) write_engine(out, *engine);
  return out;
}

}  // namespace strata::metrics
