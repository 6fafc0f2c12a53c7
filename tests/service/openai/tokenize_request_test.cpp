#include "service/openai/tokenize_request.h"

#include <gtest/gtest.h>

#include <limits>

namespace strata::openai {
namespace {

using json = nlohmann::ordered_json;

TEST(TokenizeRequestTest, PromptWithAndWithoutSpecialTokens) {
  auto result = parse_tokenize_request(json::parse(R"({"prompt": "Hello"})"));
  ASSERT_TRUE(std::holds_alternative<TokenizeRequest>(result));
  EXPECT_FALSE(std::get<TokenizeRequest>(result).chat.has_value());
  EXPECT_EQ(std::get<TokenizeRequest>(result).prompt, "Hello");
  EXPECT_TRUE(std::get<TokenizeRequest>(result).add_special_tokens);

  result = parse_tokenize_request(
      json::parse(R"({"prompt": "Hello", "add_special_tokens": false, "model": "any"})"));
  ASSERT_TRUE(std::holds_alternative<TokenizeRequest>(result));
  EXPECT_FALSE(std::get<TokenizeRequest>(result).add_special_tokens);
}

TEST(TokenizeRequestTest, MessagesAreReadAsAChatCompletion) {
  auto result = parse_tokenize_request(json::parse(
      R"({"prompt": "ignored", "messages": [{"role": "developer", "content": "Be brief."},
                                            {"role": "user", "content": "Hi"}]})"));
  ASSERT_TRUE(std::holds_alternative<TokenizeRequest>(result));
  const TokenizeRequest& r = std::get<TokenizeRequest>(result);
  ASSERT_TRUE(r.chat.has_value());
  ASSERT_EQ(r.chat->messages.size(), 2u);
  EXPECT_EQ(r.chat->messages[0]["role"], "system");
  EXPECT_EQ(r.chat->messages[1]["content"], "Hi");
}

TEST(TokenizeRequestTest, InvalidFieldsAre400WithParam) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "prompt"},
      {R"({"prompt": 5})", "prompt"},
      {R"({"prompt": "a", "add_special_tokens": 1})", "add_special_tokens"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": [{"role": "robot", "content": "x"}]})", "messages.[0].role"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": -1})", "temperature"},
  };
  for (const auto& [body, param] : cases) {
    auto result = parse_tokenize_request(json::parse(body));
    ASSERT_TRUE(std::holds_alternative<ApiError>(result)) << body;
    EXPECT_EQ(std::get<ApiError>(result).status, 400) << body;
    EXPECT_EQ(std::get<ApiError>(result).param, param) << body;
  }
  EXPECT_TRUE(std::holds_alternative<ApiError>(parse_tokenize_request(json::array())));
}

TEST(DetokenizeRequestTest, IdsBelowTheVocabularySize) {
  auto result = parse_detokenize_request(json::parse(R"({"tokens": [0, 5, 9]})"), 10);
  ASSERT_TRUE(std::holds_alternative<std::vector<TokenId>>(result));
  EXPECT_EQ(std::get<std::vector<TokenId>>(result), (std::vector<TokenId>{0, 5, 9}));
  result = parse_detokenize_request(json::parse(R"({"tokens": []})"), 10);
  ASSERT_TRUE(std::holds_alternative<std::vector<TokenId>>(result));
  EXPECT_TRUE(std::get<std::vector<TokenId>>(result).empty());
}

TEST(DetokenizeRequestTest, AnythingButIdsInRangeIs400) {
  // 2^64 - 1 as an unsigned JSON number, and 2^32 + 1, which would wrap to 1 as an int32.
  const json cases[] = {
      json::object(),
      json{{"tokens", "1 2"}},
      json{{"tokens", json::array({1, 10})}},
      json{{"tokens", json::array({-1})}},
      json{{"tokens", json::array({1.5})}},
      json{{"tokens", json::array({"1"})}},
      json{{"tokens", json::array({std::numeric_limits<uint64_t>::max()})}},
      json{{"tokens", json::array({(int64_t{1} << 32) + 1})}},
      json::array(),
  };
  for (const json& body : cases) {
    auto result = parse_detokenize_request(body, 10);
    ASSERT_TRUE(std::holds_alternative<ApiError>(result)) << body.dump();
    EXPECT_EQ(std::get<ApiError>(result).status, 400) << body.dump();
  }
}

}  // namespace
}  // namespace strata::openai
