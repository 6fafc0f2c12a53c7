#include "service/server/prepare_generation.h"

#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>

#include "common/str_cat.h"
#include "service/anthropic/messages_reply_writer.h"
#include "service/anthropic/messages_request.h"
#include "service/openai/chat_completion_request.h"
#include "service/openai/chat_prompt.h"
#include "service/openai/completion_request.h"
#include "service/openai/openai_reply_writer.h"
#include "service/openai/random_id.h"
#include "service/responses/responses_reply_writer.h"
#include "service/responses/responses_request.h"

namespace strata {
namespace {

using openai::ApiError;
using openai::Endpoint;

bool is_chat(Endpoint endpoint) { return endpoint != Endpoint::kCompletions; }

std::optional<ApiError> check_model_name(const std::string& requested,
                                         const std::vector<std::string>& names) {
  if (requested.empty()) return std::nullopt;
  for (const std::string& name : names) {
    if (requested == name) return std::nullopt;
  }
  ApiError error = openai::not_found(str_cat("The model `", requested,
                                             "` does not exist. This server serves `",
                                             names.front(), "` (see GET /v1/models)."));
  error.param = "model";
  error.code = "model_not_found";
  return error;
}

struct ChatPrepared {
  std::vector<TokenId> tokens;
  std::optional<openai::ReplySplit> split;
};

// Where a reply must be split into content, reasoning and tool calls: the model marks
// reasoning, or it marks tool calls and the request offers tools. Elsewhere the reply is
// all content, passed on as it comes.
std::optional<openai::ReplySplit> reply_split(const openai::ChatCompletionRequest& request,
                                              const ReplyFormat& format,
                                              const std::string& prompt_text) {
  const bool tools = request.tools.offered() && format.tool_calls != ToolCallSyntax::kNone;
  if (!tools && format.reasoning == ReasoningSyntax::kNone) return std::nullopt;
  openai::ReplySplit split{.format = format, .options = {.tools_offered = tools}};
  if (format.reasoning == ReasoningSyntax::kThinkTags) {
    // The prompt ends inside a <think> block its template opened (thinking on).
    const size_t open = prompt_text.rfind("<think>");
    const size_t close = prompt_text.rfind("</think>");
    split.options.starts_in_reasoning =
        open != std::string::npos && (close == std::string::npos || close < open);
  }
  if (tools) split.options.tools = openai::tool_signatures(request.tools.tools);
  return split;
}

// The prompt's tokens and how its reply splits, or the error that prevents them.
std::variant<ChatPrepared, ApiError> chat_prompt(const openai::ChatCompletionRequest& r,
                                                 const LoadedModel& model) {
  try {
    LoadedModel::ChatPrompt prompt = model.encode_chat(openai::chat_template_input(r));
    return ChatPrepared{
        .tokens = std::move(prompt.tokens),
        .split = reply_split(r, model.chat_template().reply_format(), prompt.text)};
  } catch (const std::invalid_argument& e) {
    return openai::invalid_request(str_cat("The model's chat template rejects these messages: ",
                                           e.what()),
                                   "messages");
  }
}

std::variant<std::vector<TokenId>, ApiError> completion_prompt(const openai::CompletionRequest& r,
                                                               const Tokenizer& tokenizer) {
  if (!r.prompt_is_tokens) {
    // The whole prompt is the client's own text with no template around it, so
    // special-token text in it is read as those tokens, as Hugging Face and
    // vLLM do: that is how a client writes its own chat format.
    return tokenizer.encode(r.prompt_text, {.add_special = true, .parse_special = true});
  }
  return r.prompt_tokens;  // their ids are checked with the other limits

}

// The request limits' answer in OpenAI's words (which clients parse).
ApiError limit_error(Endpoint endpoint, const RequestError& error, const GenerateRequest& request,
                     const openai::GenerationOptions& options, int64_t context_length,
                     int64_t n_vocab) {
  using Kind = RequestError::Kind;
  const char* prompt_param = is_chat(endpoint) ? "messages" : "prompt";
  const auto n_prompt = static_cast<int64_t>(request.prompt.size());
  switch (error.kind) {
    case Kind::kEmptyPrompt:
      return openai::invalid_request("The prompt is empty.", prompt_param);
    case Kind::kTokenOutsideVocabulary:
      return openai::invalid_request(str_cat("Token id ", error.token_id, " in the prompt is "
                                             "outside the vocabulary (", n_vocab, " tokens)."),
                                     "prompt");
    case Kind::kMaxTokensTooSmall:
      if (options.max_tokens) {
        return openai::invalid_request(
            str_cat(options.max_tokens_key, " must be >= 1, got ", *options.max_tokens),
            options.max_tokens_key);
      }
      // None given: the prompt leaves the context nothing.
      return context_length_exceeded(endpoint, context_length, n_prompt, 0);
    case Kind::kContextExceeded:
    case Kind::kCacheTooSmall:
      return context_length_exceeded(endpoint, context_length, n_prompt, request.max_tokens);
    case Kind::kInvalidSampling:
      break;
  }
  return openai::invalid_request(error.message);
}

struct ParsedBody {
  openai::GenerationOptions options;
  std::variant<std::vector<TokenId>, ApiError> prompt;
  std::optional<openai::ReplySplit> split;  // chat: how the reply splits
  openai::Json echo = nullptr;              // responses: the settings the reply repeats
};

// A chat request's body, its prompt and split.
ParsedBody chat_body(const openai::ChatCompletionRequest& request, const LoadedModel& model) {
  ParsedBody body{.options = request.options, .prompt = std::vector<TokenId>{}, .split = {}};
  auto prepared = chat_prompt(request, model);
  if (auto* error = std::get_if<ApiError>(&prepared)) {
    body.prompt = std::move(*error);
  } else {
    ChatPrepared& chat = std::get<ChatPrepared>(prepared);
    body.prompt = std::move(chat.tokens);
    body.split = std::move(chat.split);
  }
  return body;
}

std::variant<ParsedBody, ApiError> parse_and_tokenize(Endpoint endpoint, const openai::Json& body,
                                                      const LoadedModel& model,
                                                      const std::vector<std::string>& names) {
  if (endpoint == Endpoint::kCompletions) {
    auto parsed = openai::parse_completion_request(body);
    if (auto* error = std::get_if<ApiError>(&parsed)) return std::move(*error);
    auto& request = std::get<openai::CompletionRequest>(parsed);
    if (auto error = check_model_name(request.options.model, names)) return std::move(*error);
    return ParsedBody{request.options, completion_prompt(request, model.tokenizer()), {}};
  }
  if (endpoint == Endpoint::kResponses) {
    auto parsed = responses::parse_responses_request(body);
    if (auto* error = std::get_if<ApiError>(&parsed)) return std::move(*error);
    auto& request = std::get<responses::ResponsesRequest>(parsed);
    if (auto error = check_model_name(request.chat.options.model, names)) return std::move(*error);
    ParsedBody parsed_body = chat_body(request.chat, model);
    parsed_body.echo = std::move(request.echo);
    return parsed_body;
  }
  auto parsed = endpoint == Endpoint::kMessages
                    ? anthropic::parse_messages_request(body, anthropic::MessagesEndpoint::kCreate)
                    : openai::parse_chat_completion_request(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return std::move(*error);
  auto& request = std::get<openai::ChatCompletionRequest>(parsed);
  if (auto error = check_model_name(request.options.model, names)) return std::move(*error);
  return chat_body(request, model);
}

// How the reply is written: in the API the request came in on.
std::unique_ptr<openai::ReplyWriter> make_writer(Endpoint endpoint, ParsedBody& body,
                                                 const GenerateRequest& request,
                                                 const std::string& model,
                                                 const Tokenizer& tokenizer) {
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  if (endpoint == Endpoint::kResponses) {
    return std::make_unique<responses::ResponsesReplyWriter>(
        responses::ResponseBuilder(openai::random_id("resp_"), now_s, model, std::move(body.echo)),
        std::move(body.split));
  }
  if (endpoint == Endpoint::kMessages) {
    return std::make_unique<anthropic::MessagesReplyWriter>(
        anthropic::MessageContext{.id = openai::random_id("msg_"), .model = model},
        std::move(body.split), request.stop, static_cast<int64_t>(request.prompt.size()));
  }
  openai::ResponseContext context{
      .endpoint = endpoint,
      .id = openai::random_id(is_chat(endpoint) ? "chatcmpl-" : "cmpl-"),
      .created = now_s,
      .model = model,
      .logprobs = body.options.logprobs,
      .token_bytes = [&tokenizer](TokenId id) { return tokenizer.token_bytes(id); },
      .split = std::move(body.split)};
  return std::make_unique<openai::OpenAiReplyWriter>(std::move(context),
                                                     body.options.include_usage);
}

}  // namespace

ApiError context_length_exceeded(Endpoint endpoint, int64_t context_length, int64_t prompt_tokens,
                                 int64_t completion_tokens) {
  const char* what = is_chat(endpoint) ? "messages" : "prompt";
  // Unsigned: two non-negative int64s cannot overflow it.
  const uint64_t requested =
      static_cast<uint64_t>(prompt_tokens) + static_cast<uint64_t>(completion_tokens);
  std::string message =
      completion_tokens > 0
          ? str_cat("This model's maximum context length is ", context_length,
                    " tokens. However, you requested ", requested,
                    " tokens (", prompt_tokens, " in the ", what, ", ", completion_tokens,
                    " in the completion). Please reduce the length of the ", what,
                    " or completion.")
          : str_cat("This model's maximum context length is ", context_length,
                    " tokens. However, your ", what, " resulted in ", prompt_tokens,
                    " tokens. Please reduce the length of the ", what, ".");
  ApiError error = openai::invalid_request(std::move(message), what);
  error.code = "context_length_exceeded";
  return error;
}

std::variant<PreparedGeneration, ApiError> prepare_generation(Endpoint endpoint,
                                                              const openai::Json& body,
                                                              const ModelLimits& limits) {
  auto parsed = parse_and_tokenize(endpoint, body, limits.model, limits.model_names);
  if (auto* error = std::get_if<ApiError>(&parsed)) return std::move(*error);
  ParsedBody& request = std::get<ParsedBody>(parsed);
  if (auto* error = std::get_if<ApiError>(&request.prompt)) return std::move(*error);
  std::vector<TokenId>& prompt = std::get<std::vector<TokenId>>(request.prompt);
  openai::GenerationOptions& o = request.options;
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  SamplingParams sampling = o.sampling;
  sampling.seed =
      o.seed ? *o.seed : (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  const Tokenizer& tokenizer = limits.model.tokenizer();
  PreparedGeneration out{
      // No max_tokens: whatever the context has left.
      .request = {.prompt = std::move(prompt), .sampling = sampling,
                  .max_tokens = o.max_tokens.value_or(limits.request.context_length - n_prompt),
                  .stop = o.stop, .logprobs = o.logprobs, .ignore_eos = o.ignore_eos,
                  // Split replies need the markup their control tokens stand for.
                  .render_special_tokens = request.split.has_value()},
      .writer = nullptr,
      .model = limits.model_names.front(),
      .stream = o.stream,
      .include_usage = o.include_usage};
  // The same check the engine's submit() makes, answered in OpenAI's words.
  if (std::optional<RequestError> error = check_request(out.request, limits.request, tokenizer)) {
    return limit_error(endpoint, *error, out.request, o, limits.request.context_length,
                       tokenizer.n_vocab());
  }
  out.writer = make_writer(endpoint, request, out.request, out.model, tokenizer);
  return out;
}

}  // namespace strata
