#include "engine/completion.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

Completion run_to_completion(Engine& engine, GenerateRequest request,
                             const std::function<void(std::string_view)>& on_text,
                             const std::atomic<bool>* cancel) {
  Completion result;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  const Clock::time_point start = Clock::now();
  Clock::time_point first_token = start;
  // Runs on the engine thread, one event at a time; `result` is the caller's
  // again once `done` is seen under the mutex.
  auto on_event = [&](const EngineEvent& event) {
    if (result.tokens.empty() && !event.token_ids.empty()) first_token = Clock::now();
    result.tokens.insert(result.tokens.end(), event.token_ids.begin(), event.token_ids.end());
    result.logprobs.insert(result.logprobs.end(), event.logprobs.begin(), event.logprobs.end());
    result.text += event.text;
    if (on_text && !event.text.empty()) on_text(event.text);
    if (!event.finish) return;
    result.finish = *event.finish;
    result.error = event.error;
    result.usage = event.usage;
    result.first_token_seconds = seconds_between(start, first_token);
    result.decode_seconds = seconds_between(first_token, Clock::now());
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    finished.notify_one();
  };
  const uint64_t id = engine.submit(std::move(request), on_event);
  std::unique_lock<std::mutex> lock(mutex);
  if (cancel == nullptr) {
    finished.wait(lock, [&] { return done; });
    return result;
  }
  // The flag is set from a signal handler or another thread, which cannot
  // wake this one: look at it every few milliseconds.
  bool cancelled = false;
  while (!finished.wait_for(lock, std::chrono::milliseconds(5), [&] { return done; })) {
    if (!cancelled && cancel->load(std::memory_order_relaxed)) {
      engine.cancel(id);
      cancelled = true;
    }
  }
  return result;
}

}  // namespace strata
