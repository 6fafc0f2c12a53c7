// The Engine end to end on a tiny random llama (hidden 64, 2 layers, the
// llama2 tokenizer) on the CPU backend: batch invariance, preemption under
// block pressure, cancellation, chunked prefill beside decoding streams, and
// priorities. Every test asserts exact outcomes (tokens, counts), not times,
// and that the KV pool is entirely free once the engine is gone.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/engine/engine_test_support.h"

namespace strata {
namespace {

using namespace strata::testing;
constexpr int64_t kContext = kTestContext;

TEST(EngineTest, RejectsRequestsThatCannotRun) {
  EngineUnderTest e(EngineSetup{.n_kv_blocks = 64});
  auto submit = [&](GenerateRequest r) { return e.engine().submit(std::move(r), nullptr); };
  GenerateRequest ok = request_for(0, 8, 4);
  GenerateRequest empty = ok;
  empty.prompt.clear();
  EXPECT_THROW(submit(empty), std::invalid_argument);
  GenerateRequest bad_token = ok;
  bad_token.prompt[3] = 32000;
  EXPECT_THROW(submit(bad_token), std::invalid_argument);
  GenerateRequest too_long = ok;
  too_long.max_tokens = kContext;
  EXPECT_THROW(submit(too_long), std::invalid_argument);
  GenerateRequest too_big_for_pool = ok;
  too_big_for_pool.max_tokens = 64 * 16;
  EXPECT_THROW(submit(too_big_for_pool), std::invalid_argument);
  GenerateRequest bad_sampling = ok;
  bad_sampling.sampling.top_p = 0.0f;
  EXPECT_THROW(submit(bad_sampling), std::invalid_argument);
  GenerateRequest no_tokens = ok;
  no_tokens.max_tokens = 0;
  EXPECT_THROW(submit(no_tokens), std::invalid_argument);
}

TEST(EngineTest, FinalEventCarriesUsageAndText) {
  EngineUnderTest e(EngineSetup{});
  GenerateRequest r = request_for(1, 20, 12);
  r.logprobs = true;
  std::vector<EngineEvent> events;
  std::mutex mutex;
  std::condition_variable done;
  e.engine().submit(r, [&](const EngineEvent& ev) {
    std::lock_guard<std::mutex> lock(mutex);
    events.push_back(ev);
    done.notify_all();
  });
  std::unique_lock<std::mutex> lock(mutex);
  ASSERT_TRUE(done.wait_for(lock, std::chrono::minutes(1),
                            [&] { return !events.empty() && events.back().finish; }));
  ASSERT_EQ(events.size(), 12u);
  std::vector<TokenId> tokens;
  for (const EngineEvent& ev : events) {
    ASSERT_EQ(ev.token_ids.size(), 1u);
    ASSERT_EQ(ev.logprobs.size(), 1u);
    EXPECT_EQ(ev.logprobs[0].id, ev.token_ids[0]);
    tokens.push_back(ev.token_ids[0]);
  }
  EXPECT_EQ(*events.back().finish, FinishReason::kLength);
  EXPECT_EQ(events.back().usage.prompt_tokens, 20);
  EXPECT_EQ(events.back().usage.completion_tokens, 12);
  std::string text;
  for (const EngineEvent& ev : events) text += ev.text;
  EXPECT_EQ(text, test_model().tokenizer().decode(tokens));
}

// The stats count the time the backend's forward passes take: some of it,
// and no more than the request took from submit to its last event; and of
// it, the steps that only decode.
TEST(EngineTest, StatsCountTheForwardPassesTime) {
  EngineUnderTest e(EngineSetup{});
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  const auto submitted = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_event;
  e.engine().submit(request_for(2, 20, 8), [&](const EngineEvent& ev) {
    std::lock_guard<std::mutex> lock(mutex);
    last_event = std::chrono::steady_clock::now();
    finished = ev.finish.has_value();
    done.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(done.wait_for(lock, std::chrono::minutes(1), [&] { return finished; }));
  }
  // The stats are published after the step that sent the last event.
  EngineStats stats = e.engine().stats();
  for (int i = 0; i < 1000 && stats.n_generated_tokens < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stats = e.engine().stats();
  }
  ASSERT_EQ(stats.n_generated_tokens, 8);
  const std::chrono::duration<double> took = last_event - submitted;
  EXPECT_GT(stats.forward_seconds, 0.0);
  EXPECT_LE(stats.forward_seconds, took.count());
  // One request: a prefill step, then decode steps for the tokens after the
  // first (the prefill step chose the first).
  EXPECT_EQ(stats.n_decode_steps, stats.n_steps - 1);
  EXPECT_GT(stats.decode_forward_seconds, 0.0);
  EXPECT_LT(stats.decode_forward_seconds, stats.forward_seconds);
}

TEST(EngineTest, BatchedGreedyOutputEqualsAlone) {
  std::vector<GenerateRequest> requests;
  for (int i = 0; i < 32; ++i) requests.push_back(request_for(i, 1 + (i * 37) % 300, 16));
  const std::vector<Outcome> alone = run_alone(requests);
  EngineUnderTest e(EngineSetup{});
  std::map<int, Outcome> together = run_together(e, requests);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(together[i].tokens, alone[static_cast<size_t>(i)].tokens) << "request " << i;
    EXPECT_EQ(together[i].text, alone[static_cast<size_t>(i)].text) << "request " << i;
    EXPECT_EQ(*together[i].finish, FinishReason::kLength);
    EXPECT_EQ(together[i].usage.completion_tokens, 16);
  }
  EXPECT_EQ(e.shut_down().n_generated_tokens, 32 * 16);
}

TEST(EngineTest, PreemptionUnderBlockPressureKeepsOutputs) {
  // 20 requests of up to 64 tokens (4 blocks of 16); blocks for about 3.
  std::vector<GenerateRequest> requests;
  for (int i = 0; i < 20; ++i) requests.push_back(request_for(i, 20 + i, 40 - i, i % 2 == 1));
  const std::vector<Outcome> alone = run_alone(requests);
  EngineUnderTest e(EngineSetup{.n_kv_blocks = 12, .scheduler = {.watermark_blocks = 0}});
  std::map<int, Outcome> together = run_together(e, requests);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(together[i].tokens, alone[static_cast<size_t>(i)].tokens) << "request " << i;
    EXPECT_EQ(together[i].text, alone[static_cast<size_t>(i)].text) << "request " << i;
  }
  const EngineStats stats = e.shut_down();
  EXPECT_GT(stats.n_preemptions, 0);
  EXPECT_EQ(stats.n_blocks_used, 0);
}

TEST(EngineTest, RepeatedPromptReusesCachedBlocks) {
  EngineUnderTest e(EngineSetup{});
  const GenerateRequest r = request_for(5, 100, 10);
  Outcome first, second;
  {
    Collector c;
    e.engine().submit(r, c.callback(0));
    first = c.wait(1)[0];
  }
  {
    Collector c;
    e.engine().submit(r, c.callback(0));
    second = c.wait(1)[0];
  }
  EXPECT_EQ(first.usage.cached_prompt_tokens, 0);
  EXPECT_EQ(second.usage.cached_prompt_tokens, 96);  // 6 full blocks of 16
  EXPECT_EQ(second.tokens, first.tokens);
  EXPECT_EQ(e.shut_down().n_cached_prompt_tokens, 96);
}

// The next turn of a chat sends the previous prompt, the reply and a new user
// message: the reply's KV is reused too, not only the first prompt's.
TEST(EngineTest, NextChatTurnReusesThePreviousReply) {
  EngineUnderTest e(EngineSetup{});
  const GenerateRequest turn1 = request_for(6, 100, 40);
  Outcome reply;
  {
    Collector c;
    e.engine().submit(turn1, c.callback(0));
    reply = c.wait(1)[0];
  }
  ASSERT_EQ(reply.tokens.size(), 40u);
  GenerateRequest turn2 = request_for(7, 20, 10);
  std::vector<TokenId> prompt = turn1.prompt;
  prompt.insert(prompt.end(), reply.tokens.begin(), reply.tokens.end());
  prompt.insert(prompt.end(), turn2.prompt.begin(), turn2.prompt.end());
  turn2.prompt = prompt;  // 160 tokens
  Outcome second;
  {
    Collector c;
    e.engine().submit(turn2, c.callback(0));
    second = c.wait(1)[0];
  }
  // Turn 1 computed KV for 139 positions (its last token was never fed back):
  // 8 full blocks of 16, two of them holding only generated tokens.
  EXPECT_EQ(second.usage.cached_prompt_tokens, 128);
  EXPECT_EQ(second.tokens, run_alone({turn2})[0].tokens);
}

TEST(EngineTest, ConcurrentRequestsComputeASharedSystemPromptOnce) {
  // 16 requests arrive together: one 1,000-token system prompt, then 24
  // tokens of their own. The first computes the system prompt; the others
  // wait while its blocks are in flight and then share its 62 full blocks
  // (992 tokens), computing only the rest: 8 system tokens of the partial
  // block and their own 24.
  constexpr int kRequests = 16;
  constexpr int64_t kSystem = 1000, kSuffix = 24, kShared = 992;
  const std::vector<TokenId> system = random_prompt(kSystem, 77);
  std::vector<GenerateRequest> requests;
  for (int i = 0; i < kRequests; ++i) {
    GenerateRequest r = request_for(i, kSuffix, 8, i % 2 == 1);
    r.prompt.insert(r.prompt.begin(), system.begin(), system.end());
    requests.push_back(std::move(r));
  }
  // Reference: each alone, computing everything (no cache to share).
  const std::vector<Outcome> alone = run_alone(requests, SchedulerOptions{.prefix_caching = false});
  // A budget that fits a whole prompt, so the others are looked at (and
  // held) while the first one computes the system prompt.
  EngineUnderTest e(EngineSetup{.scheduler = {.max_batch_tokens = 2048}});
  std::map<int, Outcome> together = run_together(e, requests);
  int64_t n_uncached = 0, sum_cached = 0;
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(together[i].tokens, alone[static_cast<size_t>(i)].tokens) << "request " << i;
    EXPECT_EQ(together[i].text, alone[static_cast<size_t>(i)].text) << "request " << i;
    EXPECT_EQ(alone[static_cast<size_t>(i)].usage.cached_prompt_tokens, 0);
    const int64_t cached = together[i].usage.cached_prompt_tokens;
    EXPECT_TRUE(cached == 0 || cached == kShared) << "request " << i << ": " << cached;
    n_uncached += cached == 0 ? 1 : 0;
    sum_cached += cached;
    EXPECT_EQ(together[i].usage.prompt_tokens, kSystem + kSuffix);
  }
  EXPECT_EQ(n_uncached, 1);
  const EngineStats stats = e.shut_down();
  EXPECT_EQ(stats.n_preemptions, 0);
  EXPECT_EQ(stats.n_prompt_tokens, kRequests * (kSystem + kSuffix));
  EXPECT_EQ(stats.n_cached_prompt_tokens, (kRequests - 1) * kShared);
  EXPECT_EQ(stats.n_cached_prompt_tokens, sum_cached);
  // 1,000 + 16 x 24 + 15 x 8 = 1,504 of 16,384.
  EXPECT_EQ(stats.n_computed_prompt_tokens,
            kSystem + kRequests * kSuffix + (kRequests - 1) * (kSystem - kShared));
  std::printf("shared system prompt: %lld prompt tokens, %lld computed, %lld cached, %lld steps\n",
              static_cast<long long>(stats.n_prompt_tokens),
              static_cast<long long>(stats.n_computed_prompt_tokens),
              static_cast<long long>(stats.n_cached_prompt_tokens),
              static_cast<long long>(stats.n_steps));
}

TEST(EngineTest, CancelMidPrefillAndMidDecodeFreesBlocks) {
  Engine* engine = nullptr;
  int long_chunks = 0;  // engine thread only
  EngineSetup setup{.n_kv_blocks = 512, .scheduler = {.max_batch_tokens = 64}};
  // Mid-prefill: the 2000-token prompt (the only one with full 64-token
  // chunks) is cancelled after its 3rd chunk, from the step hook.
  setup.on_step = [&](const StepReport& report) {  // engine thread
    for (const StepReport::Chunk& chunk : report.chunks) {
      if (chunk.n_tokens == 64 && ++long_chunks == 3) engine->cancel(chunk.request_id);
    }
  };
  EngineUnderTest e(setup);
  engine = &e.engine();
  // Mid-decode: cancelled from its own callback on its 3rd token.
  Collector c;
  EventCallback decode_events = c.callback(1);
  int decode_tokens = 0;  // engine thread only
  engine->submit(request_for(1, 10, 100), [&, decode_events](const EngineEvent& ev) {
    if (++decode_tokens == 3) engine->cancel(ev.request_id);
    decode_events(ev);  // last: after the final event the test may end
  });
  std::map<int, Outcome> out = c.wait(1);
  EXPECT_EQ(*out[1].finish, FinishReason::kCancelled);
  EXPECT_EQ(out[1].usage.completion_tokens, 3);
  EXPECT_EQ(out[1].tokens.size(), 3u);

  Collector c2;
  engine->submit(request_for(2, 2000, 8), c2.callback(2));
  std::map<int, Outcome> out2 = c2.wait(1);
  EXPECT_EQ(*out2[2].finish, FinishReason::kCancelled);
  EXPECT_EQ(out2[2].usage.completion_tokens, 0);
  EXPECT_TRUE(out2[2].tokens.empty());
  engine->cancel(12345);  // unknown: ignored
  const EngineStats stats = e.shut_down();
  EXPECT_EQ(long_chunks, 3);
  EXPECT_EQ(stats.n_blocks_used, 0);
  EXPECT_EQ(stats.n_running + stats.n_waiting, 0);
}

TEST(EngineTest, LongPromptPrefillsInChunksWhileStreamsDecode) {
  std::mutex mutex;
  std::vector<StepReport> steps;
  EngineSetup setup{.n_kv_blocks = 400, .scheduler = {.max_batch_tokens = 512}};
  setup.on_step = [&](const StepReport& report) {
    std::lock_guard<std::mutex> lock(mutex);
    steps.push_back(report);
  };
  // Declared before the engine, so that they outlive its thread.
  Collector c;
  std::atomic<bool> long_submitted{false};
  uint64_t long_id = 0;
  EngineUnderTest e(setup);
  Engine& engine = e.engine();
  EventCallback stream_events = c.callback(0);
  EventCallback long_events = c.callback(1);
  // The stream submits the long prompt from its first event (engine thread),
  // so the long prompt arrives while the stream is decoding. The collector
  // is told last: once it has the final event, the callback touches nothing.
  const uint64_t stream_id = engine.submit(request_for(0, 10, 40), [&](const EngineEvent& ev) {
    if (!long_submitted.exchange(true))
      long_id = engine.submit(request_for(1, 4096, 4), long_events);
    stream_events(ev);
  });
  std::map<int, Outcome> out = c.wait(2);
  EXPECT_EQ(out[0].tokens.size(), 40u);
  EXPECT_EQ(out[1].tokens.size(), 4u);
  std::lock_guard<std::mutex> lock(mutex);
  int prefill_steps = 0;
  int64_t prefilled = 0;
  for (const StepReport& step : steps) {
    const StepReport::Chunk* stream = nullptr;
    const StepReport::Chunk* prefill = nullptr;
    for (const StepReport::Chunk& chunk : step.chunks) {
      if (chunk.request_id == stream_id) stream = &chunk;
      if (chunk.request_id == long_id && chunk.n_past < 4096) prefill = &chunk;
    }
    if (prefill == nullptr) continue;
    ++prefill_steps;
    prefilled += prefill->n_tokens;
    EXPECT_LE(prefill->n_tokens, 511) << "step " << step.step;
    ASSERT_NE(stream, nullptr) << "the stream got no token in step " << step.step;
    EXPECT_EQ(stream->n_tokens, 1);
    EXPECT_TRUE(stream->samples);
    EXPECT_EQ(step.chunks.front().request_id, stream_id);  // decode first
  }
  EXPECT_EQ(prefilled, 4096);
  EXPECT_EQ(prefill_steps, 9);  // ceil(4096 / 511)
}

TEST(EngineTest, InteractiveAdmittedBeforeQueuedBatch) {
  // One running slot: requests queue up behind the first.
  std::mutex mutex;
  std::vector<uint64_t> admitted;
  EngineSetup setup{.scheduler = {.max_running = 1}};
  setup.on_step = [&](const StepReport& report) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const StepReport::Chunk& chunk : report.chunks) {
      if (chunk.n_past == 0) admitted.push_back(chunk.request_id);
    }
  };
  EngineUnderTest e(setup);
  Engine& engine = e.engine();
  Collector c;
  std::vector<uint64_t> ids(4);
  EventCallback first_events = c.callback(0);
  std::atomic<bool> queued{false};
  // Queue the others from the first request's first event, so they are all
  // waiting together when the slot frees.
  ids[0] = engine.submit(request_for(0, 8, 6), [&](const EngineEvent& ev) {
    if (!queued.exchange(true)) {
      GenerateRequest b1 = request_for(1, 8, 2), b2 = request_for(2, 8, 2),
                      i3 = request_for(3, 8, 2);
      b1.priority = b2.priority = Priority::kBatch;
      ids[1] = engine.submit(b1, c.callback(1));
      ids[2] = engine.submit(b2, c.callback(2));
      ids[3] = engine.submit(i3, c.callback(3));
    }
    first_events(ev);
  });
  c.wait(4);
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(admitted, (std::vector<uint64_t>{ids[0], ids[3], ids[1], ids[2]}));
}

}  // namespace
}  // namespace strata
