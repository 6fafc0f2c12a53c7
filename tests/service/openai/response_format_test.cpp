#include "service/openai/response_format.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace strata::openai {
namespace {

using json = nlohmann::ordered_json;

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
  // A reply that called tools: only a natural stop says so.
  EXPECT_EQ(finish_reason(FinishReason::kStop, /*called_tools=*/true), "tool_calls");
  EXPECT_EQ(finish_reason(FinishReason::kLength, /*called_tools=*/true), "length");
  EXPECT_EQ(finish_reason(FinishReason::kCancelled, /*called_tools=*/true), "abort");
}

// Replies split into reasoning, content and tool calls (Qwen3's markup).
const ReplySplit kQwen3Split{.format = {.tool_calls = ToolCallSyntax::kHermes,
                                        .reasoning = ReasoningSyntax::kThinkTags},
                             .options = {.tools_offered = true}};

const std::string kSplitReply =
    "<think>\nIt is 20 \u00b0C in Paris; check tomorrow.\n</think>\n\n"
    "It is 20 \u00b0C now.\n"
    "<tool_call>\n"
    R"({"name": "get_weather", "arguments": {"city": "Paris", "when": ["tomorrow"]}})"
    "\n</tool_call>";
const std::string kSplitReasoning = "It is 20 \u00b0C in Paris; check tomorrow.";
const std::string kSplitContent = "It is 20 \u00b0C now.";
const std::string kSplitArguments = R"({"city": "Paris", "when": ["tomorrow"]})";

ResponseContext split_context(bool logprobs = false) {
  ResponseContext context = chat_context(logprobs);
  context.split = kQwen3Split;
  return context;
}

TEST(ResponseFormatTest, SplitChatCompletionHasReasoningAndToolCalls) {
  CompletionResult result;
  EngineEvent last = token_event(1, std::string(kSplitReply));
  last.finish = FinishReason::kStop;
  last.usage = {.prompt_tokens = 30, .cached_prompt_tokens = 0, .completion_tokens = 40};
  accumulate(result, last);
  Json body = response_json(split_context(), result);
  const Json& choice = body["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  const Json& message = choice["message"];
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_EQ(message["content"], kSplitContent);
  EXPECT_EQ(message["reasoning_content"], kSplitReasoning);
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  const Json& call = message["tool_calls"][0];
  EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_")) << call;
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(call["function"]["arguments"], kSplitArguments);
  EXPECT_EQ(Json::parse(call["function"]["arguments"].get<std::string>()),
            Json::parse(kSplitArguments))
      << "arguments are JSON text";

  // Cut short by max_tokens: the calls stay, the finish reason says why it ended.
  result.finish = FinishReason::kLength;
  EXPECT_EQ(response_json(split_context(), result)["choices"][0]["finish_reason"], "length");
  // Without a split the same text is all content.
  result.finish = FinishReason::kStop;
  Json plain = response_json(chat_context(), result)["choices"][0];
  EXPECT_EQ(plain["message"]["content"], kSplitReply);
  EXPECT_EQ(plain["finish_reason"], "stop");
}

// The frames of an SSE text, as JSON; "[DONE]" must end it.
std::vector<Json> sse_chunks(const std::string& sse) {
  std::vector<Json> out;
  size_t at = 0;
  bool done = false;
  while (at < sse.size()) {
    const size_t end = sse.find("\n\n", at);
    if (end == std::string::npos || sse.compare(at, 6, "data: ") != 0) {
      ADD_FAILURE() << "not an SSE frame at " << at << ": " << sse.substr(at);
      break;
    }
    const std::string data = sse.substr(at + 6, end - at - 6);
    EXPECT_FALSE(done) << "a frame after [DONE]: " << data;
    if (data == "[DONE]") {
      done = true;
    } else {
      out.push_back(Json::parse(data));
    }
    at = end + 2;
  }
  EXPECT_TRUE(done) << "no [DONE]";
  return out;
}

// What the deltas of a split stream add up to, checked chunk by chunk on the way.
struct StreamedReply {
  std::string content;
  std::string reasoning;
  std::vector<std::string> call_names;
  std::vector<std::string> call_arguments;
  std::string finish_reason;
};

StreamedReply gather(const std::vector<Json>& chunks) {
  StreamedReply reply;
  EXPECT_FALSE(chunks.empty());
  if (chunks.empty()) return reply;
  EXPECT_EQ(chunks.front()["choices"][0]["delta"], Json({{"role", "assistant"}, {"content", ""}}));
  for (size_t i = 1; i < chunks.size(); ++i) {
    const Json& choice = chunks[i]["choices"][0];
    const Json& delta = choice["delta"];
    if (!choice["finish_reason"].is_null()) {
      EXPECT_EQ(i + 1, chunks.size()) << "the finish chunk is the last";
      EXPECT_TRUE(delta.empty()) << delta;
      reply.finish_reason = choice["finish_reason"].get<std::string>();
      continue;
    }
    EXPECT_EQ(delta.size(), 1u) << "one field a delta: " << delta;
    if (delta.contains("content")) {
      const std::string text = delta["content"];
      EXPECT_FALSE(text.empty());
      EXPECT_EQ(text.find('<'), std::string::npos) << "markup in content: " << text;
      EXPECT_EQ(text.find("tool_call"), std::string::npos) << text;
      reply.content += text;
    } else if (delta.contains("reasoning_content")) {
      reply.reasoning += delta["reasoning_content"].get<std::string>();
    } else if (delta.contains("tool_calls")) {
      EXPECT_EQ(delta["tool_calls"].size(), 1u);
      const Json& call = delta["tool_calls"][0];
      const size_t index = call["index"].get<size_t>();
      if (call.contains("id")) {
        EXPECT_EQ(index, reply.call_names.size()) << "calls begin in order";
        EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_")) << call;
        EXPECT_EQ(call["type"], "function");
        EXPECT_EQ(call["function"]["arguments"], "") << "the header carries no arguments";
        reply.call_names.push_back(call["function"]["name"].get<std::string>());
        reply.call_arguments.emplace_back();
      } else {
        EXPECT_EQ(call.size(), 2u) << "a fragment carries only index and arguments: " << call;
        EXPECT_LT(index, reply.call_names.size()) << "a fragment before its call began";
        if (index < reply.call_arguments.size()) {
          reply.call_arguments[index] += call["function"]["arguments"].get<std::string>();
        }
      }
    } else {
      ADD_FAILURE() << "an unexpected delta: " << delta;
    }
  }
  return reply;
}

void expect_whole_reply(const StreamedReply& reply, const std::string& where) {
  EXPECT_EQ(reply.content, kSplitContent) << where;
  EXPECT_EQ(reply.reasoning, kSplitReasoning) << where;
  EXPECT_EQ(reply.call_names, std::vector<std::string>{"get_weather"}) << where;
  EXPECT_EQ(reply.call_arguments, std::vector<std::string>{std::string(kSplitArguments)})
      << where;
  EXPECT_EQ(reply.finish_reason, "tool_calls") << where;
}

EngineEvent text_event(std::string text, bool final) {
  EngineEvent event = token_event(1, std::move(text));
  if (final) event.finish = FinishReason::kStop;
  return event;
}

TEST(ResponseFormatTest, SplitStreamCutAtEveryByteAddsUpToTheWholeReply) {
  const std::string reply(kSplitReply);
  for (size_t cut = 0; cut <= reply.size(); ++cut) {
    ResponseStream stream(split_context(), /*include_usage=*/false);
    std::string sse = stream.on_event(text_event(reply.substr(0, cut), false));
    sse += stream.on_event(text_event(reply.substr(cut), true));
    EXPECT_TRUE(stream.done());
    expect_whole_reply(gather(sse_chunks(sse)), "cut at " + std::to_string(cut));
  }
}

TEST(ResponseFormatTest, SplitStreamOneByteAnEvent) {
  const std::string reply(kSplitReply);
  ResponseStream stream(split_context(), /*include_usage=*/true);
  std::string sse;
  for (size_t i = 0; i < reply.size(); ++i) {
    sse += stream.on_event(text_event(reply.substr(i, 1), false));
  }
  EngineEvent last = text_event("", true);
  last.usage = {.prompt_tokens = 5, .cached_prompt_tokens = 0, .completion_tokens = 9};
  sse += stream.on_event(last);
  std::vector<Json> chunks = sse_chunks(sse);
  ASSERT_GE(chunks.size(), 2u);
  // The usage chunk closes the stream, after the finish chunk.
  EXPECT_EQ(chunks.back()["choices"], Json::array());
  EXPECT_EQ(chunks.back()["usage"]["completion_tokens"], 9);
  chunks.pop_back();
  expect_whole_reply(gather(chunks), "one byte an event");
}

TEST(ResponseFormatTest, SplitStreamLogprobsWaitForTheirDelta) {
  // "<" may open <think>: held back with its token's logprobs until the reply ends.
  ResponseStream stream(split_context(/*logprobs=*/true), /*include_usage=*/false);
  std::string start = stream.start();
  EngineEvent first = token_event(1, "<");
  first.logprobs = {{.id = 1, .logprob = -1.0f, .top = {}}};
  EXPECT_EQ(stream.on_event(first), "") << "nothing certain yet";
  EngineEvent second = token_event(2, "b>");
  second.logprobs = {{.id = 2, .logprob = -2.0f, .top = {}}};
  second.finish = FinishReason::kStop;
  std::vector<Json> chunks = sse_chunks(start + stream.on_event(second));
  ASSERT_EQ(chunks.size(), 3u);
  const Json& choice = chunks[1]["choices"][0];
  EXPECT_EQ(choice["delta"], Json({{"content", "<b>"}}));
  ASSERT_EQ(choice["logprobs"]["content"].size(), 2u) << choice;
  EXPECT_EQ(choice["logprobs"]["content"][0]["token"], "Hel");
  EXPECT_EQ(choice["logprobs"]["content"][1]["token"], "lo");
  EXPECT_EQ(chunks[2]["choices"][0]["finish_reason"], "stop");
}

TEST(ResponseFormatTest, SplitStreamWithoutCallsFinishesWithStop) {
  ResponseStream stream(split_context(), /*include_usage=*/false);
  std::string sse = stream.on_event(text_event("<think>\nhm\n</think>\n\nHi.", true));
  std::vector<Json> chunks = sse_chunks(sse);
  StreamedReply reply = gather(chunks);
  EXPECT_EQ(reply.reasoning, "hm");
  EXPECT_EQ(reply.content, "Hi.");
  EXPECT_TRUE(reply.call_names.empty());
  EXPECT_EQ(reply.finish_reason, "stop");
}

}  // namespace
}  // namespace strata::openai
