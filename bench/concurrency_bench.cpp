#include "bench/concurrency_bench.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

// One request's timeline, written by the engine thread's callback.
struct RequestTimes {
  Clock::time_point submitted;
  std::vector<Clock::time_point> tokens;  // arrival of each generated token, in order
  std::optional<FinishReason> finish;
  std::string error;
  Usage usage;  // from the final event
  Clock::time_point finished;
};

// Shared by the driving thread and the engine thread's callbacks (which hold
// it by shared_ptr, so it outlives any callback whatever happens here).
struct LoadState {
  std::mutex mutex;
  std::condition_variable finished_one;
  std::vector<RequestTimes> requests;  // [n_requests], under mutex
  int64_t n_finished = 0;              // under mutex
};

// Prompts of `prompt_tokens` random ids; the first `shared_prefix` are the same in all.
std::vector<std::vector<TokenId>> make_prompts(const ConcurrencyBenchOptions& o, int32_t n_vocab) {
  std::mt19937 rng(o.seed);
  std::uniform_int_distribution<int32_t> token(0, n_vocab - 1);
  std::vector<TokenId> prefix(static_cast<size_t>(o.shared_prefix));
  for (TokenId& id : prefix) id = token(rng);
  std::vector<std::vector<TokenId>> prompts(static_cast<size_t>(o.n_requests), prefix);
  for (std::vector<TokenId>& prompt : prompts) {
    while (static_cast<int64_t>(prompt.size()) < o.prompt_tokens) prompt.push_back(token(rng));
  }
  return prompts;
}

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

SteadyDecode steady_decode(std::span<const std::vector<double>> token_times, int64_t concurrency) {
  const size_t wave =
      std::min(token_times.size(), static_cast<size_t>(std::max<int64_t>(concurrency, 1)));
  if (wave == 0) return {};
  double begin = token_times[0].front(), end = token_times[0].back();
  for (size_t i = 1; i < wave; ++i) {
    begin = std::max(begin, token_times[i].front());
    end = std::min(end, token_times[i].back());
  }
  if (end <= begin) return {};
  SteadyDecode steady{.n_tokens = 0, .seconds = end - begin};
  for (const std::vector<double>& times : token_times) {
    for (double t : times) steady.n_tokens += t > begin && t <= end ? 1 : 0;
  }
  return steady;
}

LatencyPercentiles nearest_rank_percentiles(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  auto at = [&](size_t percent) {
    return samples[std::max<size_t>((percent * n + 99) / 100, 1) - 1];
  };
  return {.p50 = at(50), .p90 = at(90), .p99 = at(99), .max = samples.back()};
}

ConcurrencyBenchResult run_concurrency_bench(Engine& engine, int32_t n_vocab,
                                             const ConcurrencyBenchOptions& o) {
  if (o.concurrency < 1 || o.n_requests < 1 || o.prompt_tokens < 1 || o.gen_tokens < 1 ||
      o.shared_prefix < 0 || o.shared_prefix > o.prompt_tokens) {
    throw std::invalid_argument("concurrency bench: bad options");
  }
  std::vector<std::vector<TokenId>> prompts = make_prompts(o, n_vocab);
  auto state = std::make_shared<LoadState>();
  state->requests.resize(static_cast<size_t>(o.n_requests));

  const Clock::time_point start = Clock::now();
  int64_t n_submitted = 0;
  std::unique_lock lock(state->mutex);
  while (state->n_finished < o.n_requests) {
    while (n_submitted < o.n_requests && n_submitted - state->n_finished < o.concurrency) {
      const size_t index = static_cast<size_t>(n_submitted++);
      state->requests[index].submitted = Clock::now();
      lock.unlock();
      // Engine thread: timestamps only, under a short lock.
      auto on_event = [state, index](const EngineEvent& event) {
        const Clock::time_point now = Clock::now();
        {
          std::lock_guard guard(state->mutex);
          RequestTimes& times = state->requests[index];
          times.tokens.insert(times.tokens.end(), event.token_ids.size(), now);
          if (!event.finish) return;
          times.finish = event.finish;
          times.error = event.error;
          times.usage = event.usage;
          times.finished = now;
          ++state->n_finished;
        }
        state->finished_one.notify_one();
      };
      engine.submit({.prompt = std::move(prompts[index]),
                     .sampling = {.temperature = 0.0f},
                     .max_tokens = o.gen_tokens,
                     .ignore_eos = true},
                    std::move(on_event));
      lock.lock();
    }
    state->finished_one.wait(lock, [&] {
      return state->n_finished == o.n_requests ||
             (n_submitted < o.n_requests && n_submitted - state->n_finished < o.concurrency);
    });
  }

  ConcurrencyBenchResult result;
  Clock::time_point end = start;
  std::vector<std::vector<double>> token_seconds;
  for (const RequestTimes& times : state->requests) {
    if (times.finish != FinishReason::kLength ||
        static_cast<int64_t>(times.tokens.size()) != o.gen_tokens) {
      throw std::runtime_error("concurrency bench: a request ended early" +
                               (times.error.empty() ? std::string() : ": " + times.error));
    }
    end = std::max(end, times.finished);
    result.n_prompt_tokens += times.usage.prompt_tokens;
    result.n_cached_prompt_tokens += times.usage.cached_prompt_tokens;
    result.n_generated_tokens += static_cast<int64_t>(times.tokens.size());
    result.ttft_ms.push_back(ms_between(times.submitted, times.tokens.front()));
    for (size_t i = 1; i < times.tokens.size(); ++i) {
      result.itl_ms.push_back(ms_between(times.tokens[i - 1], times.tokens[i]));
    }
    std::vector<double>& seconds = token_seconds.emplace_back();
    for (Clock::time_point t : times.tokens) seconds.push_back(ms_between(start, t) / 1000.0);
  }
  result.wall_seconds = std::chrono::duration<double>(end - start).count();
  result.steady = steady_decode(token_seconds, o.concurrency);
  return result;
}

}  // namespace strata
