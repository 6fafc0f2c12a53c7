// check_request: each limit answers with its own kind and a message that
// names the numbers; a request that fits gets nullopt.
#include "engine/request_limits.h"

#include <gtest/gtest.h>

#include "tests/engine/engine_test_support.h"

namespace strata {
namespace {

using Kind = RequestError::Kind;

const RequestLimits kLimits{.n_vocab = 1000, .context_length = 256, .block_tokens = 16,
                            .n_kv_blocks = 8};

std::optional<RequestError> check(const GenerateRequest& request) {
  return check_request(request, kLimits, testing::test_model().tokenizer());
}

TEST(RequestLimitsTest, ARequestThatFitsPasses) {
  EXPECT_FALSE(check({.prompt = {1, 2, 3}, .max_tokens = 100}).has_value());
  EXPECT_FALSE(check({.prompt = std::vector<TokenId>(28, 5), .max_tokens = 100}).has_value())
      << "128 tokens: exactly the 8 blocks";
}

TEST(RequestLimitsTest, EachLimitHasItsKind) {
  EXPECT_EQ(check({.prompt = {}})->kind, Kind::kEmptyPrompt);
  const std::optional<RequestError> id = check({.prompt = {1, -1}});
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->kind, Kind::kTokenOutsideVocabulary);
  EXPECT_EQ(id->token_id, -1);
  EXPECT_EQ(check({.prompt = {1, 1000}})->kind, Kind::kTokenOutsideVocabulary)
      << "an id the tokenizer has but the model's embedding does not";
  EXPECT_EQ(check({.prompt = {1}, .max_tokens = 0})->kind, Kind::kMaxTokensTooSmall);
  const std::optional<RequestError> context = check({.prompt = {1, 2}, .max_tokens = 255});
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(context->kind, Kind::kContextExceeded);
  EXPECT_EQ(context->message,
            "the prompt (2 tokens) plus max_tokens (255) exceeds the context length (256)");
  EXPECT_EQ(check({.prompt = {1}, .max_tokens = INT64_MAX})->kind, Kind::kContextExceeded)
      << "no overflow";
  EXPECT_EQ(check({.prompt = {1}, .max_tokens = 128})->kind, Kind::kCacheTooSmall);
  EXPECT_EQ(check({.prompt = {1}, .sampling = {.temperature = -1.0f}, .max_tokens = 4})->kind,
            Kind::kInvalidSampling);
}

}  // namespace
}  // namespace strata
