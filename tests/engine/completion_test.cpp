// run_to_completion over a ModelEngine: how a prompt is cut into prefill
// passes changes nothing a request gets back; a request outside the limits is
// refused with check_request's message; a set cancel flag ends the request.
// The tiny random llama of the engine tests, on the CPU backend.
#include "engine/completion.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "engine/model_engine.h"
#include "tests/engine/engine_test_support.h"

namespace strata {
namespace {

using testing::random_prompt;
using testing::test_model;

ModelEngineOptions one_sequence(int64_t max_batch_tokens) {
  return {.max_running = 1, .max_batch_tokens = max_batch_tokens, .n_kv_blocks = 64,
          .kv_type = WeightType::kF32, .threads = 1, .backend = BackendChoice::kCpu,
          .check_integrity = true};
}

Completion complete(int64_t max_batch_tokens) {
  ModelEngine model_engine(test_model(), one_sequence(max_batch_tokens));
  return run_to_completion(model_engine.engine(),
                           {.prompt = random_prompt(37, 5), .sampling = {.temperature = 0.0f},
                            .max_tokens = 12, .logprobs = true, .ignore_eos = true});
}

TEST(CompletionTest, PrefillChunkSizeChangesNothing) {
  const Completion whole = complete(512);
  ASSERT_EQ(whole.tokens.size(), 12u);
  EXPECT_EQ(whole.finish, FinishReason::kLength);
  EXPECT_EQ(whole.usage.prompt_tokens, 37);
  EXPECT_GT(whole.first_token_seconds, 0.0);
  for (const int64_t chunk : {37, 16, 5, 1}) {
    SCOPED_TRACE(chunk);
    const Completion chunked = complete(chunk);
    EXPECT_EQ(chunked.tokens, whole.tokens);
    ASSERT_EQ(chunked.logprobs.size(), whole.logprobs.size());
    for (size_t i = 0; i < whole.logprobs.size(); ++i) {
      EXPECT_NEAR(chunked.logprobs[i].logprob, whole.logprobs[i].logprob, 1e-5);
    }
  }
}

TEST(CompletionTest, RefusesWhatDoesNotFitWithTheLimitsMessage) {
  ModelEngine model_engine(test_model(), one_sequence(64));
  Engine& engine = model_engine.engine();
  // 64 blocks of 16 tokens: the ModelEngine caps the context at what the cache holds.
  EXPECT_EQ(engine.limits().context_length, 64 * 16);
  try {
    run_to_completion(engine, {.prompt = random_prompt(8, 1), .max_tokens = 64 * 16});
    FAIL() << "a request beyond the KV cache was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "the prompt (8 tokens) plus max_tokens (1024) exceeds the context length (1024)");
  }
  EXPECT_THROW(run_to_completion(engine, {.prompt = {}}), std::invalid_argument);
  // Nothing was held back by the refused requests.
  EXPECT_EQ(run_to_completion(engine, {.prompt = random_prompt(8, 1), .max_tokens = 4}).finish,
            FinishReason::kLength);
}

TEST(CompletionTest, ACancelFlagEndsTheRequest) {
  ModelEngine model_engine(test_model(), one_sequence(64));
  std::atomic<bool> cancel{true};
  const Completion cancelled =
      run_to_completion(model_engine.engine(),
                        {.prompt = random_prompt(8, 2), .max_tokens = 500, .ignore_eos = true},
                        nullptr, &cancel);
  EXPECT_EQ(cancelled.finish, FinishReason::kCancelled);
  EXPECT_LT(cancelled.tokens.size(), 500u);
}

}  // namespace
}  // namespace strata
