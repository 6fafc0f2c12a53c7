#include "service/openai/response_format.h"

#include <map>

#include <gtest/gtest.h>

namespace strata::openai {
namespace {

using nlohmann::json;

const TokenBytes kBytes = [](TokenId id) {
  static const std::map<TokenId, std::string> vocab = {
      {1, "Hel"}, {2, "lo"}, {3, "!"}, {4, "\xC3"}};
  return vocab.at(id);
};

ResponseContext chat_context(bool logprobs = false) {
  return {.endpoint = Endpoint::kChatCompletions, .id = "chatcmpl-1", .created = 1700000000,
          .model = "m", .logprobs = logprobs, .token_bytes = kBytes};
}

EngineEvent token_event(TokenId id, std::string text) {
  EngineEvent e;
  e.request_id = 7;
  e.token_ids = {id};
  e.text = std::move(text);
  return e;
}

TEST(ResponseFormatTest, ChatStreamWithIncludeUsage) {
  ResponseStream stream(chat_context(), /*include_usage=*/true);
  std::string sse = stream.on_event(token_event(1, "Hel"));
  sse += stream.on_event(token_event(2, "lo"));
  EngineEvent last = token_event(3, "!");
  last.finish = FinishReason::kStop;
  last.usage = {.prompt_tokens = 10, .cached_prompt_tokens = 4, .completion_tokens = 3};
  sse += stream.on_event(last);
  EXPECT_TRUE(stream.done());
  const std::string head =
      R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m",)";
  const std::string expected =
      "data: " + head +
      R"("choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null})"
      "\n\n"
      "data: " +
      head +
      R"("choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null})"
      "\n\n"
      "data: " +
      head +
      R"("choices":[{"index":0,"delta":{"content":"lo"},"logprobs":null,"finish_reason":null}],"usage":null})"
      "\n\n"
      "data: " +
      head +
      R"("choices":[{"index":0,"delta":{"content":"!"},"logprobs":null,"finish_reason":null}],"usage":null})"
      "\n\n"
      "data: " +
      head +
      R"("choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null})"
      "\n\n"
      "data: " +
      head +
      R"("choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":4}}})"
      "\n\n"
      "data: [DONE]\n\n";
  EXPECT_EQ(sse, expected);
  EXPECT_EQ(stream.on_event(last), "");  // nothing after [DONE]
}

TEST(ResponseFormatTest, StreamWithoutUsageHasNoUsageField) {
  ResponseStream stream(chat_context(), /*include_usage=*/false);
  EngineEvent last = token_event(1, "Hel");
  last.finish = FinishReason::kLength;
  std::string sse = stream.on_event(last);
  EXPECT_EQ(sse.find("usage"), std::string::npos);
  EXPECT_NE(sse.find(R"("finish_reason":"length")"), std::string::npos);
  EXPECT_TRUE(sse.ends_with("data: [DONE]\n\n"));
}

TEST(ResponseFormatTest, ErrorMidStream) {
  ResponseStream stream(chat_context(), /*include_usage=*/true);
  std::string sse = stream.on_event(token_event(1, "Hel"));
  EngineEvent failed;
  failed.finish = FinishReason::kError;
  failed.error = "out of memory";
  std::string tail = stream.on_event(failed);
  EXPECT_EQ(tail,
            "data: {\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\","
            "\"param\":null,\"code\":null}}\n\n"
            "data: [DONE]\n\n");
  EXPECT_TRUE(stream.done());
}

TEST(ResponseFormatTest, ChatCompletionWithCachedTokens) {
  CompletionResult result;
  accumulate(result, token_event(1, "Hel"));
  EngineEvent last = token_event(2, "lo");
  last.finish = FinishReason::kLength;
  last.usage = {.prompt_tokens = 20, .cached_prompt_tokens = 16, .completion_tokens = 2};
  accumulate(result, last);
  EXPECT_EQ(response_json(chat_context(), result),
            Json::parse(R"({"id":"chatcmpl-1","object":"chat.completion","created":1700000000,
              "model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello",
              "refusal":null},"logprobs":null,"finish_reason":"length"}],
              "usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22,
              "prompt_tokens_details":{"cached_tokens":16}}})"));
}

TEST(ResponseFormatTest, ChatLogprobs) {
  CompletionResult result;
  result.text = "Hello";
  result.logprobs = {{.id = 1, .logprob = -0.5f, .top = {{1, -0.5f}, {3, -1.5f}}},
                     {.id = 2, .logprob = -0.25f, .top = {}}};
  Json body = response_json(chat_context(/*logprobs=*/true), result);
  EXPECT_EQ(body["choices"][0]["logprobs"],
            Json::parse(R"({"content":[
              {"token":"Hel","logprob":-0.5,"bytes":[72,101,108],"top_logprobs":[
                {"token":"Hel","logprob":-0.5,"bytes":[72,101,108]},
                {"token":"!","logprob":-1.5,"bytes":[33]}]},
              {"token":"lo","logprob":-0.25,"bytes":[108,111],"top_logprobs":[]}]})"));
}

TEST(ResponseFormatTest, CompletionLogprobsAndText) {
  CompletionResult result;
  result.text = "Hello";
  result.finish = FinishReason::kStop;
  result.usage = {.prompt_tokens = 3, .cached_prompt_tokens = 0, .completion_tokens = 2};
  result.logprobs = {{.id = 1, .logprob = -0.5f, .top = {{3, -0.25f}}},
                     {.id = 2, .logprob = -std::numeric_limits<float>::infinity(), .top = {}}};
  ResponseContext context{.endpoint = Endpoint::kCompletions, .id = "cmpl-1", .created = 5,
                          .model = "m", .logprobs = true, .token_bytes = kBytes};
  EXPECT_EQ(response_json(context, result),
            Json::parse(R"({"id":"cmpl-1","object":"text_completion","created":5,"model":"m",
              "choices":[{"index":0,"text":"Hello","logprobs":{
                "tokens":["Hel","lo"],"token_logprobs":[-0.5,-9999.0],
                "top_logprobs":[{"!":-0.25,"Hel":-0.5},{"lo":-9999.0}],"text_offset":[0,3]},
                "finish_reason":"stop"}],
              "usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,
                "prompt_tokens_details":{"cached_tokens":0}}})"));
}

TEST(ResponseFormatTest, CompletionStreamCarriesTextOffsets) {
  ResponseContext context{.endpoint = Endpoint::kCompletions, .id = "cmpl-1", .created = 5,
                          .model = "m", .logprobs = true, .token_bytes = kBytes};
  ResponseStream stream(context, /*include_usage=*/false);
  EXPECT_EQ(stream.start(), "");  // no role chunk
  EngineEvent first = token_event(1, "Hel");
  first.logprobs = {{.id = 1, .logprob = -1.0f, .top = {}}};
  EngineEvent second = token_event(2, "lo");
  second.logprobs = {{.id = 2, .logprob = -2.0f, .top = {}}};
  second.finish = FinishReason::kStop;
  std::string sse = stream.on_event(first);
  sse += stream.on_event(second);
  const std::string head =
      R"(data: {"id":"cmpl-1","object":"text_completion","created":5,"model":"m",)";
  EXPECT_EQ(
      sse,
      head +
          R"("choices":[{"index":0,"text":"Hel","logprobs":{"tokens":["Hel"],"token_logprobs":[-1.0],"top_logprobs":[{"Hel":-1.0}],"text_offset":[0]},"finish_reason":null}]})"
          "\n\n" +
          head +
          R"("choices":[{"index":0,"text":"lo","logprobs":{"tokens":["lo"],"token_logprobs":[-2.0],"top_logprobs":[{"lo":-2.0}],"text_offset":[3]},"finish_reason":null}]})"
          "\n\n" +
          head +
          R"("choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"stop"}]})"
          "\n\n"
          "data: [DONE]\n\n");
}

TEST(ResponseFormatTest, PartialUtf8TokenIsReplacedInTextButKeptInBytes) {
  SampledToken t{.id = 4, .logprob = -1.0f, .top = {}};
  Json logprobs = chat_logprobs_json(std::span(&t, 1), kBytes);
  EXPECT_EQ(logprobs["content"][0]["bytes"], Json::parse("[195]"));
  EXPECT_EQ(dump_json(logprobs["content"][0]["token"]), "\"\xEF\xBF\xBD\"");  // U+FFFD
}

TEST(ResponseFormatTest, FinishReasons) {
  EXPECT_EQ(finish_reason(FinishReason::kStop), "stop");
  EXPECT_EQ(finish_reason(FinishReason::kLength), "length");
  EXPECT_EQ(finish_reason(FinishReason::kCancelled), "abort");
  EXPECT_EQ(finish_reason(FinishReason::kError), "error");
}

}  // namespace
}  // namespace strata::openai
