#include "service/server/prepare_generation.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/str_cat.h"
#include "service/anthropic/messages_reply_writer.h"
#include "service/openai/openai_reply_writer.h"
#include "tests/service/server/tiny_model_file.h"

namespace strata {
namespace {

using json = nlohmann::ordered_json;
using openai::ApiError;
using openai::Endpoint;

constexpr Endpoint kChat = Endpoint::kChatCompletions;
constexpr Endpoint kCompletions = Endpoint::kCompletions;
constexpr Endpoint kAnthropic = Endpoint::kMessages;

std::string template_text(const std::string& name) {
  std::ifstream in(std::string(STRATA_SOURCE_DIR) + "/tests/data/chat_templates/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The tiny model (tiny-llama.gguf, Llama 2's template), or the same weights with the chat
// template tests/data/chat_templates/NAME chosen in place of the file's.
const LoadedModel& test_model(const std::string& template_name = "") {
  static std::map<std::string, std::unique_ptr<LoadedModel>> models;
  std::unique_ptr<LoadedModel>& model = models[template_name];
  if (!model) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      str_cat("strata_prepare_generation_test_", ::getpid());
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "tiny-llama.gguf").string();
    testing::write_tiny_model(path);
    model = template_name.empty() ? LoadedModel::open(path)
                                  : LoadedModel::open(path, template_text(template_name));
    std::filesystem::remove_all(dir);  // mapped: the bytes stay
  }
  return *model;
}

// An engine's limits with a KV cache that holds one whole context.
ModelLimits limits(int64_t context_length = 2048, const LoadedModel& model = test_model()) {
  return ModelLimits{.model = model,
                     .request = {.n_vocab = model.config().n_vocab,
                                 .context_length = context_length,
                                 .block_tokens = 16,
                                 .n_kv_blocks = (context_length + 15) / 16},
                     .model_names = {"tiny", "tiny-llama.gguf", "tiny-llama"}};
}

PreparedGeneration prepared(Endpoint endpoint, const json& body, const ModelLimits& l = limits()) {
  auto result = prepare_generation(endpoint, body, l);
  if (auto* error = std::get_if<ApiError>(&result)) {
    ADD_FAILURE() << body.dump() << ": " << error->status << " " << error->message;
    return {};
  }
  return std::move(std::get<PreparedGeneration>(result));
}

ApiError error_of(Endpoint endpoint, const json& body, const ModelLimits& l = limits()) {
  auto result = prepare_generation(endpoint, body, l);
  if (!std::holds_alternative<ApiError>(result)) {
    ADD_FAILURE() << body.dump() << " was accepted";
    return {};
  }
  return std::get<ApiError>(result);
}

const json kMessages = json::array({{{"role", "system"}, {"content", "Be brief."}},
                                    {{"role", "user"}, {"content", "Hello there"}}});

json chat_body(json extra = json::object()) {
  json body = {{"model", "tiny"}, {"messages", kMessages}};
  body.update(extra);
  return body;
}

json completion_body(json extra = json::object()) {
  json body = {{"model", "tiny"}, {"prompt", "Once upon a time"}};
  body.update(extra);
  return body;
}

// kMessages's conversation as the model's template renders it, tokenized.
std::vector<TokenId> chat_prompt() {
  const std::vector<ChatMessage> messages{{"system", "Be brief."}, {"user", "Hello there"}};
  return test_model().encode_chat({.messages = chat_messages_value(messages)}).tokens;
}

int64_t chat_prompt_tokens() { return static_cast<int64_t>(chat_prompt().size()); }

int64_t completion_prompt_tokens() {
  return static_cast<int64_t>(
      test_model()
          .tokenizer()
          .encode("Once upon a time", {.add_special = true, .parse_special = true})
          .size());
}

TEST(PrepareGenerationTest, ChatMessagesBecomeTheChatFormatsTokens) {
  const LoadedModel& model = test_model();
  ASSERT_NE(model.chat_template().source().find("[INST]"), std::string::npos) << "Llama 2's";
  PreparedGeneration p = prepared(kChat, chat_body());
  EXPECT_EQ(p.request.prompt, chat_prompt());
  ASSERT_FALSE(p.request.prompt.empty());
  EXPECT_EQ(p.request.prompt.front(), *model.tokenizer().bos()) << "the template writes <s>";
  EXPECT_EQ(std::count(p.request.prompt.begin(), p.request.prompt.end(), *model.tokenizer().bos()),
            1)
      << "no second BOS";
  const std::string text = model.tokenizer().decode(p.request.prompt);
  EXPECT_NE(text.find("[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHello there [/INST]"),
            std::string::npos)
      << text;
}

TEST(PrepareGenerationTest, MessagesTheTemplateRejectsAre400) {
  // Llama 2's template raises unless user and assistant alternate.
  ApiError error = error_of(kChat, chat_body({{"messages", json::array({
                                                   {{"role", "user"}, {"content", "a"}},
                                                   {{"role", "user"}, {"content", "b"}}})}}));
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.param, "messages");
  EXPECT_EQ(error.message.rfind("The model's chat template rejects these messages", 0), 0u)
      << error.message;
}

TEST(PrepareGenerationTest, CompletionTextPromptIsTokenizedWithBos) {
  const Tokenizer& tokenizer = test_model().tokenizer();
  PreparedGeneration p = prepared(kCompletions, completion_body());
  EXPECT_EQ(p.request.prompt,
            tokenizer.encode("Once upon a time", {.add_special = true, .parse_special = true}));
  ASSERT_FALSE(p.request.prompt.empty());
  EXPECT_EQ(p.request.prompt.front(), *tokenizer.bos());
  // Special-token text in a completion prompt is read as the token.
  PreparedGeneration special = prepared(kCompletions, completion_body({{"prompt", "</s>"}}));
  EXPECT_NE(std::find(special.request.prompt.begin(), special.request.prompt.end(),
                      *tokenizer.eos()),
            special.request.prompt.end());
}

TEST(PrepareGenerationTest, MaxTokensDefaultsToTheRestOfTheContext) {
  const int64_t n_chat = chat_prompt_tokens();
  EXPECT_EQ(prepared(kChat, chat_body(), limits(300)).request.max_tokens, 300 - n_chat);
  const int64_t n_text = completion_prompt_tokens();
  EXPECT_EQ(prepared(kCompletions, completion_body(), limits(300)).request.max_tokens,
            300 - n_text);
  // Given: as given; exactly filling the context is allowed.
  EXPECT_EQ(prepared(kChat, chat_body({{"max_tokens", 7}})).request.max_tokens, 7);
  EXPECT_EQ(prepared(kChat, chat_body({{"max_tokens", 10}}), limits(n_chat + 10))
                .request.max_tokens,
            10);
  EXPECT_EQ(prepared(kChat, chat_body({{"max_completion_tokens", 9}})).request.max_tokens, 9);
  // One token of room left: a one-token completion.
  EXPECT_EQ(prepared(kCompletions, completion_body(), limits(n_text + 1)).request.max_tokens, 1);
}

// The request limits (engine/request_limits.h) answer in the field's own name.
TEST(PrepareGenerationTest, MaxTokensBelowOneNamesTheField) {
  const ApiError chat = error_of(kChat, chat_body({{"max_tokens", 0}}));
  EXPECT_EQ(chat.status, 400);
  EXPECT_EQ(chat.param, "max_tokens");
  EXPECT_EQ(chat.message, "max_tokens must be >= 1, got 0");
  const ApiError newer = error_of(kChat, chat_body({{"max_completion_tokens", -3}}));
  EXPECT_EQ(newer.param, "max_completion_tokens");
  EXPECT_EQ(newer.message, "max_completion_tokens must be >= 1, got -3");
  EXPECT_EQ(error_of(kCompletions, completion_body({{"max_tokens", -1}})).param, "max_tokens");
}

TEST(PrepareGenerationTest, ContextLengthExceededWithMaxTokens) {
  const int64_t n_chat = chat_prompt_tokens();
  const int64_t context = n_chat + 5;
  ApiError chat = error_of(kChat, chat_body({{"max_tokens", 10}}), limits(context));
  EXPECT_EQ(chat.status, 400);
  EXPECT_EQ(chat.type, "invalid_request_error");
  EXPECT_EQ(chat.code, "context_length_exceeded");
  EXPECT_EQ(chat.param, "messages");
  EXPECT_EQ(chat.message,
            str_cat("This model's maximum context length is ", context,
                    " tokens. However, you requested ", n_chat + 10, " tokens (", n_chat,
                    " in the messages, 10 in the completion). Please reduce the length of the "
                    "messages or completion."));

  const int64_t n_text = completion_prompt_tokens();
  ApiError text = error_of(kCompletions, completion_body({{"max_tokens", 10}}), limits(n_text + 9));
  EXPECT_EQ(text.status, 400);
  EXPECT_EQ(text.code, "context_length_exceeded");
  EXPECT_EQ(text.param, "prompt");
  EXPECT_EQ(text.message,
            str_cat("This model's maximum context length is ", n_text + 9,
                    " tokens. However, you requested ", n_text + 10, " tokens (", n_text,
                    " in the prompt, 10 in the completion). Please reduce the length of the "
                    "prompt or completion."));
}

TEST(PrepareGenerationTest, ContextLengthExceededByThePromptAlone) {
  const int64_t n_chat = chat_prompt_tokens();
  // The prompt fills the context: no room for even one token.
  for (int64_t context : {n_chat, n_chat - 1}) {
    ApiError chat = error_of(kChat, chat_body(), limits(context));
    EXPECT_EQ(chat.status, 400);
    EXPECT_EQ(chat.code, "context_length_exceeded");
    EXPECT_EQ(chat.param, "messages");
    EXPECT_EQ(chat.message, str_cat("This model's maximum context length is ", context,
                                    " tokens. However, your messages resulted in ", n_chat,
                                    " tokens. Please reduce the length of the messages."));
  }
  const int64_t n_text = completion_prompt_tokens();
  ApiError text = error_of(kCompletions, completion_body(), limits(n_text - 1));
  EXPECT_EQ(text.code, "context_length_exceeded");
  EXPECT_EQ(text.param, "prompt");
  EXPECT_EQ(text.message, str_cat("This model's maximum context length is ", n_text - 1,
                                  " tokens. However, your prompt resulted in ", n_text,
                                  " tokens. Please reduce the length of the prompt."));
}

// max_tokens is any positive int64 after parsing: prompt + max_tokens must not
// overflow (signed overflow: undefined; UBSan aborts the server).
TEST(PrepareGenerationTest, HugeMaxTokensIsContextLengthExceeded) {
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max();
  for (int64_t max_tokens : {kHuge, kHuge - 1, kHuge / 2 + 1}) {
    for (Endpoint endpoint : {kChat, kCompletions}) {
      json body = endpoint == kChat ? chat_body({{"max_tokens", max_tokens}})
                                    : completion_body({{"max_tokens", max_tokens}});
      auto result = prepare_generation(endpoint, body, limits());
      ASSERT_TRUE(std::holds_alternative<ApiError>(result))
          << "max_tokens " << max_tokens << " was accepted with max_tokens "
          << std::get<PreparedGeneration>(result).request.max_tokens;
      const ApiError& error = std::get<ApiError>(result);
      EXPECT_EQ(error.status, 400);
      EXPECT_EQ(error.code, "context_length_exceeded");
      EXPECT_NE(error.message.find(std::to_string(max_tokens) + " in the completion"),
                std::string::npos)
          << error.message;
      EXPECT_EQ(error.message.find("requested -"), std::string::npos)
          << "a wrapped-around total: " << error.message;
    }
  }
}

TEST(PrepareGenerationTest, ContextLengthExceededTextMatchesOpenAIs) {
  // The wording clients parse, independent of any request.
  EXPECT_EQ(context_length_exceeded(kChat, 4097, 200, 4000).message,
            "This model's maximum context length is 4097 tokens. However, you requested 4200 "
            "tokens (200 in the messages, 4000 in the completion). Please reduce the length of "
            "the messages or completion.");
  EXPECT_EQ(context_length_exceeded(kChat, 4097, 5000, 0).message,
            "This model's maximum context length is 4097 tokens. However, your messages "
            "resulted in 5000 tokens. Please reduce the length of the messages.");
}

TEST(PrepareGenerationTest, UnknownModelIs404ModelNotFound) {
  for (Endpoint endpoint : {kChat, kCompletions}) {
    json body = endpoint == kChat ? chat_body({{"model", "gpt-4o"}})
                                  : completion_body({{"model", "gpt-4o"}});
    ApiError error = error_of(endpoint, body);
    EXPECT_EQ(error.status, 404);
    EXPECT_EQ(error.type, "invalid_request_error");
    EXPECT_EQ(error.code, "model_not_found");
    EXPECT_EQ(error.param, "model");
    EXPECT_NE(error.message.find("gpt-4o"), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("`tiny`"), std::string::npos) << "names the served model";
  }
  // Names are matched exactly.
  EXPECT_EQ(error_of(kChat, chat_body({{"model", "TINY"}})).status, 404);
  EXPECT_EQ(error_of(kChat, chat_body({{"model", "tiny-llama.gguf.bak"}})).status, 404);
}

TEST(PrepareGenerationTest, AliasFileNameStemOrNoModelAreAccepted) {
  for (const char* name : {"tiny", "tiny-llama.gguf", "tiny-llama"}) {
    for (Endpoint endpoint : {kChat, kCompletions}) {
      json body = endpoint == kChat ? chat_body({{"model", name}})
                                    : completion_body({{"model", name}});
      PreparedGeneration p = prepared(endpoint, body);
      EXPECT_EQ(p.model, "tiny") << name << ": the alias is reported";
    }
  }
  json no_model = chat_body();
  no_model.erase("model");
  EXPECT_EQ(prepared(kChat, no_model).model, "tiny");
}

TEST(PrepareGenerationTest, TokenPromptsAreCheckedAgainstTheVocabulary) {
  const int32_t n_vocab = test_model().tokenizer().n_vocab();
  ASSERT_EQ(n_vocab, 32000);
  PreparedGeneration p = prepared(kCompletions, completion_body({{"prompt", {1, 2, 31999}}}));
  EXPECT_EQ(p.request.prompt, (std::vector<TokenId>{1, 2, 31999})) << "taken as is, no BOS added";
  PreparedGeneration nested =
      prepared(kCompletions, completion_body({{"prompt", json::array({{5, 6}})}}));
  EXPECT_EQ(nested.request.prompt, (std::vector<TokenId>{5, 6}));

  ApiError error = error_of(kCompletions, completion_body({{"prompt", {1, 32000, 2}}}));
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.param, "prompt");
  EXPECT_NE(error.message.find("32000"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("vocabulary"), std::string::npos) << error.message;
  EXPECT_EQ(error_of(kCompletions, completion_body({{"prompt", {1, 99999999}}})).status, 400);
  EXPECT_EQ(error_of(kCompletions, completion_body({{"prompt", {1, -1}}})).status, 400);
}

TEST(PrepareGenerationTest, SeedPassedThroughOrRandom) {
  EXPECT_EQ(prepared(kChat, chat_body({{"seed", 42}})).request.sampling.seed, 42u);
  EXPECT_EQ(prepared(kCompletions, completion_body({{"seed", 0}})).request.sampling.seed, 0u)
      << "0 is a seed like any other";
  std::set<uint64_t> seeds;
  for (int i = 0; i < 8; ++i) seeds.insert(prepared(kChat, chat_body()).request.sampling.seed);
  EXPECT_EQ(seeds.size(), 8u) << "a fresh random seed for each request without one";
}

// The whole body the writer gives for one final event that sampled `id`.
json body_after(PreparedGeneration& p, TokenId id, std::string text = "x") {
  if (!p.writer) {
    ADD_FAILURE() << "no reply writer";
    return json();
  }
  EngineEvent event;
  event.text = std::move(text);
  event.token_ids = {id};
  event.logprobs = {{.id = id, .logprob = -0.5f, .top = {}}};
  event.finish = FinishReason::kStop;
  p.writer->add_event(event);
  return p.writer->body();
}

bool writes_logprobs(PreparedGeneration& p) {
  return !body_after(p, 13)["choices"][0]["logprobs"].is_null();
}

TEST(PrepareGenerationTest, SamplingStopAndLogprobsPassedThrough) {
  PreparedGeneration chat = prepared(
      kChat, chat_body({{"stop", {"\n\n", "END"}}, {"logprobs", true}, {"top_logprobs", 3},
                        {"temperature", 0.5}, {"top_p", 0.9}, {"ignore_eos", true}}));
  EXPECT_EQ(chat.request.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(chat.request.logprobs);
  EXPECT_TRUE(writes_logprobs(chat));
  EXPECT_EQ(chat.request.sampling.n_logprobs, 3);
  EXPECT_FLOAT_EQ(chat.request.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(chat.request.sampling.top_p, 0.9f);
  EXPECT_TRUE(chat.request.ignore_eos);

  PreparedGeneration text =
      prepared(kCompletions, completion_body({{"stop", "X"}, {"logprobs", 2}}));
  EXPECT_EQ(text.request.stop, (std::vector<std::string>{"X"}));
  EXPECT_TRUE(text.request.logprobs);
  EXPECT_TRUE(writes_logprobs(text));
  EXPECT_EQ(text.request.sampling.n_logprobs, 2);

  PreparedGeneration plain = prepared(kChat, chat_body());
  EXPECT_TRUE(plain.request.stop.empty());
  EXPECT_FALSE(plain.request.logprobs);
  EXPECT_FALSE(writes_logprobs(plain));
  EXPECT_FALSE(plain.request.ignore_eos);
  EXPECT_EQ(plain.request.priority, Priority::kInteractive);
}

TEST(PrepareGenerationTest, StreamAndUsageFlags) {
  PreparedGeneration streamed = prepared(
      kChat, chat_body({{"stream", true}, {"stream_options", {{"include_usage", true}}}}));
  EXPECT_TRUE(streamed.stream);
  EXPECT_TRUE(streamed.include_usage);
  PreparedGeneration whole = prepared(kCompletions, completion_body());
  EXPECT_FALSE(whole.stream);
  EXPECT_FALSE(whole.include_usage);
}

bool is_lower_hex(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(PrepareGenerationTest, ResponseIdsCreatedAndTokenBytes) {
  PreparedGeneration chat_p = prepared(kChat, chat_body({{"logprobs", true}}));
  ASSERT_TRUE(chat_p.writer);
  const json chat = body_after(chat_p, 1000);
  const std::string chat_id = chat["id"];
  ASSERT_EQ(chat_id.rfind("chatcmpl-", 0), 0u) << chat_id;
  EXPECT_EQ(chat_id.size(), 9u + 24u);
  EXPECT_TRUE(is_lower_hex(chat_id.substr(9))) << chat_id;
  EXPECT_EQ(chat["object"], "chat.completion");
  EXPECT_EQ(chat["model"], "tiny");

  PreparedGeneration text_p = prepared(kCompletions, completion_body());
  const json text = body_after(text_p, 1000);
  const std::string text_id = text["id"];
  ASSERT_EQ(text_id.rfind("cmpl-", 0), 0u) << text_id;
  EXPECT_EQ(text_id.size(), 5u + 24u);
  EXPECT_TRUE(is_lower_hex(text_id.substr(5))) << text_id;
  EXPECT_EQ(text["object"], "text_completion");

  PreparedGeneration again = prepared(kChat, chat_body());
  EXPECT_NE(body_after(again, 1)["id"], chat_id) << "ids are random";

  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  EXPECT_LE(std::abs(chat["created"].get<int64_t>() - now), 5);

  const Tokenizer& tokenizer = test_model().tokenizer();
  for (TokenId id : {TokenId{1}, TokenId{2}, TokenId{13}, TokenId{1000}, TokenId{31999}}) {
    PreparedGeneration p = prepared(kChat, chat_body({{"logprobs", true}}));
    const json logprobs = body_after(p, id)["choices"][0]["logprobs"]["content"][0];
    json bytes = json::array();
    for (unsigned char c : tokenizer.token_bytes(id)) bytes.push_back(static_cast<int>(c));
    EXPECT_EQ(logprobs["bytes"], bytes) << id;
  }
}

// The request offers tools; tiny-llama's weights with the given template.
json weather_chat(json extra = json::object()) {
  json body = chat_body({{"tools", json::parse(R"([{"type": "function", "function": {
      "name": "get_weather", "description": "The forecast",
      "parameters": {"type": "object", "properties": {"zip": {"type": "string"},
                                                      "city": {"type": "string"}}}}}])")}});
  body.update(extra);
  return body;
}

TEST(PrepareGenerationTest, ToolsAreRenderedThroughTheModelsTemplate) {
  const LoadedModel& qwen = test_model("qwen2.5.jinja");
  ASSERT_EQ(qwen.chat_template().reply_format().tool_calls, ToolCallSyntax::kHermes);
  ASSERT_EQ(qwen.chat_template().reply_format().reasoning, ReasoningSyntax::kNone);
  PreparedGeneration with_tools = prepared(kChat, weather_chat(), limits(2048, qwen));
  const std::string text = qwen.tokenizer().decode(with_tools.request.prompt);
  EXPECT_NE(text.find(R"({"type": "function", "function": {"name": "get_weather", )"
                      R"("description": "The forecast", "parameters": {"type": "object", )"
                      R"("properties": {"zip": {"type": "string"}, )"
                      R"("city": {"type": "string"}}}}})"),
            std::string::npos)
      << "the schema in the client's order: " << text;
  EXPECT_TRUE(with_tools.request.render_special_tokens) << "the reply is split";

  // Without tools, or with tool_choice none, the template sees none and nothing splits.
  PreparedGeneration plain = prepared(kChat, chat_body(), limits(2048, qwen));
  EXPECT_EQ(qwen.tokenizer().decode(plain.request.prompt).find("get_weather"), std::string::npos);
  EXPECT_FALSE(plain.request.render_special_tokens);
  PreparedGeneration none =
      prepared(kChat, weather_chat({{"tool_choice", "none"}}), limits(2048, qwen));
  EXPECT_EQ(none.request.prompt, plain.request.prompt);
  EXPECT_FALSE(none.request.render_special_tokens);

  // Llama 2's template marks no tool calls: the reply is never split.
  PreparedGeneration llama = prepared(kChat, weather_chat());
  EXPECT_FALSE(llama.request.render_special_tokens);
}

TEST(PrepareGenerationTest, SplitRepliesReachTheWriter) {
  const LoadedModel& qwen = test_model("qwen2.5.jinja");
  PreparedGeneration p = prepared(kChat, weather_chat(), limits(2048, qwen));
  const json choice = body_after(
      p, 1,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n"
      "</tool_call>")["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"]["arguments"], R"({"city": "Rome"})");
}

TEST(PrepareGenerationTest, ThinkingTemplatesSplitEveryReply) {
  // Qwen3 marks reasoning: the reply is split even without tools.
  const LoadedModel& qwen3 = test_model("qwen3.jinja");
  PreparedGeneration p = prepared(kChat, chat_body(), limits(2048, qwen3));
  EXPECT_TRUE(p.request.render_special_tokens);
  EXPECT_EQ(body_after(p, 1, "<think>\nhm\n</think>\n\nHi.")["choices"][0]["message"],
            json::parse(R"({"role": "assistant", "content": "Hi.", "refusal": null,
                            "reasoning_content": "hm"})"));
  // DeepSeek-R1's generation prompt opens <think>: the reply starts as reasoning.
  const LoadedModel& r1 = test_model("deepseek-r1-distill-qwen.jinja");
  PreparedGeneration opened = prepared(kChat, chat_body(), limits(2048, r1));
  EXPECT_TRUE(opened.request.render_special_tokens);
  const json message = body_after(opened, 1, "hm\n</think>\n\nHi.")["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "hm");
  EXPECT_EQ(message["content"], "Hi.");
}

json anthropic_body(json extra = json::object()) {
  json body = {{"model", "tiny"},
               {"max_tokens", 5},
               {"system", "Be brief."},
               {"messages", json::array({{{"role", "user"}, {"content", "Hello there"}}})}};
  body.update(extra);
  return body;
}

TEST(PrepareGenerationTest, AnthropicMessagesBody) {
  PreparedGeneration p = prepared(kAnthropic, anthropic_body({{"stop_sequences", {"END"}},
                                                             {"stream", true}}));
  EXPECT_EQ(p.request.prompt, prepared(kChat, chat_body()).request.prompt)
      << "the same conversation as the chat request";
  EXPECT_EQ(p.request.max_tokens, 5);
  EXPECT_EQ(p.request.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(p.stream);
  EXPECT_TRUE(p.include_usage);
  EXPECT_EQ(p.model, "tiny");
  ASSERT_NE(dynamic_cast<anthropic::MessagesReplyWriter*>(p.writer.get()), nullptr);
  const std::string start = p.writer->stream_start();
  EXPECT_EQ(start.rfind("event: message_start\n", 0), 0u) << start;
  EXPECT_NE(start.find(str_cat(R"("input_tokens":)", p.request.prompt.size())), std::string::npos)
      << start;
  EXPECT_NE(start.find(R"("id":"msg_)"), std::string::npos) << start;
  // The stop that ended the reply is named.
  EngineEvent last;
  last.text = "Hi";
  last.finish = FinishReason::kStop;
  last.matched_stop = 0;
  p.writer->add_event(last);
  const json body = p.writer->body();
  EXPECT_EQ(body["stop_reason"], "stop_sequence");
  EXPECT_EQ(body["stop_sequence"], "END");

  EXPECT_NE(dynamic_cast<openai::OpenAiReplyWriter*>(prepared(kChat, chat_body()).writer.get()),
            nullptr);
}

TEST(PrepareGenerationTest, AnthropicErrors) {
  json no_max = anthropic_body();
  no_max.erase("max_tokens");
  ApiError missing = error_of(kAnthropic, no_max);
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.param, "max_tokens");
  EXPECT_EQ(error_of(kAnthropic, anthropic_body({{"model", "claude"}})).status, 404);
  // Two user turns: Llama 2's template refuses them.
  ApiError rejected = error_of(kAnthropic, anthropic_body({{"messages", json::parse(R"([
      {"role": "user", "content": "a"}, {"role": "user", "content": "b"}])")}}));
  EXPECT_EQ(rejected.status, 400);
  EXPECT_EQ(rejected.param, "messages");
  EXPECT_EQ(rejected.message.rfind("The model's chat template rejects these messages", 0), 0u)
      << rejected.message;
}

TEST(PrepareGenerationTest, ToolMessagesTheTemplateCannotPlaceAre400) {
  // Llama 2's template knows no tool role: it breaks the user/assistant alternation.
  ApiError error = error_of(kChat, chat_body({{"messages", json::parse(R"([
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
        "function": {"name": "get_weather", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c", "content": "20 C"}])")}}));
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.param, "messages");
  EXPECT_EQ(error.message.rfind("The model's chat template rejects these messages", 0), 0u)
      << error.message;
}

TEST(PrepareGenerationTest, InvalidBodiesAreTheParsersErrors) {
  ApiError no_messages = error_of(kChat, json{{"model", "tiny"}});
  EXPECT_EQ(no_messages.status, 400);
  EXPECT_EQ(no_messages.param, "messages");
  ApiError bad_temperature = error_of(kCompletions, completion_body({{"temperature", -1}}));
  EXPECT_EQ(bad_temperature.status, 400);
  EXPECT_EQ(bad_temperature.param, "temperature");
  // The body is checked before the model name: a bad body with an unknown model is a 400.
  EXPECT_EQ(error_of(kChat, json{{"model", "other"}}).status, 400);
}

}  // namespace
}  // namespace strata
