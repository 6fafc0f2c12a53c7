#include "service/openai/completion_request.h"

#include <gtest/gtest.h>

namespace strata::openai {
namespace {

using json = nlohmann::ordered_json;

TEST(CompletionRequestTest, TextPromptWithLogprobs) {
  auto result = parse_completion_request(json::parse(
      R"({"model": "m", "prompt": "Once", "max_tokens": 16, "logprobs": 3, "stream": true,
          "stream_options": {"include_usage": true}, "temperature": 0})"));
  ASSERT_TRUE(std::holds_alternative<CompletionRequest>(result));
  const CompletionRequest& r = std::get<CompletionRequest>(result);
  EXPECT_FALSE(r.prompt_is_tokens);
  EXPECT_EQ(r.prompt_text, "Once");
  EXPECT_EQ(r.options.max_tokens, 16);
  EXPECT_TRUE(r.options.logprobs);
  EXPECT_EQ(r.options.sampling.n_logprobs, 3);
  EXPECT_TRUE(r.options.include_usage);
  EXPECT_FLOAT_EQ(r.options.sampling.temperature, 0.0f);
}

TEST(CompletionRequestTest, TokenPromptsAndOneStringArray) {
  for (const char* prompt : {R"([1, 2, 3])", R"([[1, 2, 3]])"}) {
    auto result = parse_completion_request(json{{"prompt", json::parse(prompt)}});
    ASSERT_TRUE(std::holds_alternative<CompletionRequest>(result)) << prompt;
    const CompletionRequest& r = std::get<CompletionRequest>(result);
    EXPECT_TRUE(r.prompt_is_tokens);
    EXPECT_EQ(r.prompt_tokens, (std::vector<TokenId>{1, 2, 3}));
    EXPECT_FALSE(r.options.logprobs);
  }
  auto result = parse_completion_request(json{{"prompt", json::array({"Hi"})}});
  ASSERT_TRUE(std::holds_alternative<CompletionRequest>(result));
  EXPECT_EQ(std::get<CompletionRequest>(result).prompt_text, "Hi");
}

TEST(CompletionRequestTest, InvalidFieldsAre400WithParam) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "prompt"},
      {R"({"prompt": 5})", "prompt"},
      {R"({"prompt": []})", "prompt"},
      {R"({"prompt": [1, -2]})", "prompt"},
      {R"({"prompt": [1, "a"]})", "prompt"},
      {R"({"prompt": ["a", "b"]})", "prompt"},
      {R"({"prompt": "a", "n": 2})", "n"},
      {R"({"prompt": "a", "logprobs": true})", "logprobs"},
      {R"({"prompt": "a", "logprobs": 21})", "logprobs"},
      {R"({"prompt": "a", "echo": true})", "echo"},
      {R"({"prompt": "a", "suffix": "z"})", "suffix"},
      {R"({"prompt": "a", "best_of": 2})", "best_of"},
      {R"({"prompt": "a", "temperature": "x"})", "temperature"},
  };
  for (const auto& [body, param] : cases) {
    auto result = parse_completion_request(json::parse(body));
    ASSERT_TRUE(std::holds_alternative<ApiError>(result)) << body;
    EXPECT_EQ(std::get<ApiError>(result).status, 400) << body;
    EXPECT_EQ(std::get<ApiError>(result).param, param) << body;
  }
}

}  // namespace
}  // namespace strata::openai
