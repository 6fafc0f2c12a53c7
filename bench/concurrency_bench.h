// The load half of `strata bench --concurrency N`: drives an Engine with R
// requests of random prompts, at most N in flight (the next is submitted when
// one finishes), each greedy with ignore_eos so it generates exactly G tokens,
// and times every request from the engine's event callbacks: submit, first
// token (TTFT) and every later token (inter-token latency, ITL).
//
// Knows only the Engine's public API; building the engine and stating the
// memory-read ceiling next to the result is bench_command.cpp's job.
//
// Threads: run_concurrency_bench() blocks the calling thread until every
// request has finished; the engine's callbacks only take a short mutex.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/engine.h"

namespace strata {

struct ConcurrencyBenchOptions {
  int64_t concurrency = 1;    // requests in flight at most, >= 1
  int64_t n_requests = 1;     // requests in all, >= 1
  int64_t prompt_tokens = 512;
  int64_t gen_tokens = 64;    // per request, exactly (ignore_eos)
  int64_t shared_prefix = 0;  // leading prompt tokens identical across requests, <= prompt_tokens
  uint32_t seed = 1;          // of the random prompts
};

struct LatencyPercentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;  // same unit as the samples; 0 when there are none
};

// Nearest-rank percentiles: the p-th is the smallest sample with at least p% of
// the samples at or below it (sorted[ceil(p/100 * n) - 1]), so every value is
// a measured one and p50 <= p90 <= p99 <= max.
LatencyPercentiles nearest_rank_percentiles(std::vector<double> samples);

// Decode while the first wave runs at full concurrency: from the moment each
// of its requests (the first `concurrency` submitted) has its first token to
// the moment the first of them has its last, the tokens delivered in between
// (any request's) per second. No prefill of the wave falls inside, so at N
// sequences this is the engine's steady aggregate decode rate. Empty window
// (e.g. one token each): 0 tokens, 0 seconds.
struct SteadyDecode {
  int64_t n_tokens = 0;
  double seconds = 0;
  double tok_s() const { return seconds > 0 ? static_cast<double>(n_tokens) / seconds : 0.0; }
};
// token_times[i]: request i's token arrival times in seconds, in submission
// order of the requests; every request has at least one token.
SteadyDecode steady_decode(std::span<const std::vector<double>> token_times, int64_t concurrency);

struct ConcurrencyBenchResult {
  double wall_seconds = 0;  // first submit to last finish
  SteadyDecode steady;      // the first wave's steady decode
  int64_t n_prompt_tokens = 0;
  int64_t n_cached_prompt_tokens = 0;  // from each request's final usage
  int64_t n_generated_tokens = 0;      // tokens delivered in events
  std::vector<double> ttft_ms;  // one per request: submit to first token
  std::vector<double> itl_ms;   // one per generated token after a request's first
};

// Runs the load on `engine` (idle on entry); n_vocab bounds the random token ids.
// Throws std::runtime_error when a request fails or ends short of gen_tokens.
ConcurrencyBenchResult run_concurrency_bench(Engine& engine, int32_t n_vocab,
                                             const ConcurrencyBenchOptions& options);

}  // namespace strata
