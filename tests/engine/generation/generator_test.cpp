// Generator: how a prompt is cut into prefill passes changes nothing a
// request gets back, and a chunk of no tokens is refused. The tiny random
// llama of the engine tests, on the CPU backend.
#include "engine/generation/generator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "engine/model_runtime.h"
#include "tests/engine/engine_test_support.h"

namespace strata {
namespace {

using testing::random_prompt;
using testing::test_model;

class GeneratorTest : public ::testing::Test {
 protected:
  GenerationResult generate(int64_t prefill_chunk_tokens) {
    Generator generator(runtime_->backend(), runtime_->kv_blocks(), test_model().tokenizer());
    const GenerationRequest request{.prompt = random_prompt(37, 5),
                                    .sampling = {.temperature = 0.0f},
                                    .max_tokens = 12,
                                    .stop = {},
                                    .ignore_eos = true,
                                    .logprobs = true,
                                    .prefill_chunk_tokens = prefill_chunk_tokens};
    std::atomic<bool> cancel{false};
    return generator.generate(request, [](std::string_view) {}, cancel);
  }

  std::unique_ptr<ModelRuntime> runtime_ = make_runtime(
      test_model(), {.n_kv_blocks = 64, .n_threads = 1, .kv_dtype = WeightType::kF32,
                     .backend = BackendChoice::kCpu});
};

TEST_F(GeneratorTest, PrefillChunkSizeChangesNothing) {
  const GenerationResult whole = generate(512);
  ASSERT_EQ(whole.tokens.size(), 12u);
  for (const int64_t chunk : {37, 16, 5, 1}) {
    SCOPED_TRACE(chunk);
    const GenerationResult chunked = generate(chunk);
    EXPECT_EQ(chunked.tokens, whole.tokens);
    ASSERT_EQ(chunked.samples.size(), whole.samples.size());
    for (size_t i = 0; i < whole.samples.size(); ++i) {
      EXPECT_NEAR(chunked.samples[i].logprob, whole.samples[i].logprob, 1e-5);
    }
  }
}

TEST_F(GeneratorTest, RefusesAPrefillChunkOfNoTokens) {
  EXPECT_THROW(generate(0), std::invalid_argument);
  EXPECT_THROW(generate(-4), std::invalid_argument);
  // Nothing was held back by the refused requests.
  EXPECT_EQ(generate(8).tokens, generate(512).tokens);
}

}  // namespace
}  // namespace strata
