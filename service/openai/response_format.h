// OpenAI response bodies built from the engine's events: chat.completion and
// text_completion objects, their streaming chunks as server-sent events, usage and
// logprobs in OpenAI's shapes.
//
// A stream is, in order (chat; a text completion has no role chunk):
//   data: {chunk, delta {"role": "assistant", "content": ""}}
//   data: {chunk, delta {"content": "..."}}            one per event with text
//   data: {chunk, delta {}, finish_reason}             when the engine finishes
//   data: {chunk, choices [], usage}                   only with include_usage
//   data: [DONE]
// With include_usage every chunk before the last carries "usage": null, as OpenAI's do.
// An engine error mid-stream is `data: {"error": {...}}` then `data: [DONE]`.
//
// Pure functions, and ResponseStream owned by one connection: the thread that runs that
// connection (its Asio strand).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/generate_request.h"
#include "service/openai/chat_reply.h"
#include "service/openai/json_fields.h"
#include "service/openai/openai_error.h"

namespace strata::openai {

// The bytes a token stands for (Tokenizer::token_bytes); may be part of a UTF-8 character.
using TokenBytes = std::function<std::string(TokenId)>;

// The API a request came in on: OpenAI chat completions or completions, Anthropic
// messages (service/anthropic/) or OpenAI responses (service/responses/); the last two
// are parsed into a chat request.
enum class Endpoint { kChatCompletions, kCompletions, kMessages, kResponses };

// What every object of one response shares.
struct ResponseContext {
  Endpoint endpoint = Endpoint::kChatCompletions;
  std::string id;       // "chatcmpl-..." or "cmpl-...", the same in every chunk
  int64_t created = 0;  // unix seconds
  std::string model;
  bool logprobs = false;   // the request asked for logprobs
  TokenBytes token_bytes;  // needed when logprobs
  // Chat: how replies split into content, reasoning and tool calls; nullopt: all content.
  std::optional<ReplySplit> split = std::nullopt;
};

// A whole reply, gathered from a request's events for a non-streaming response.
struct CompletionResult {
  std::string text;
  std::vector<SampledToken> logprobs;  // one per token, when the request asked
  FinishReason finish = FinishReason::kStop;
  Usage usage;
};
void accumulate(CompletionResult& result, const EngineEvent& event);

// "stop", "length"; a cancelled request "abort" (vLLM's word; its client is gone) and a
// failed one "error" (errors are sent as error objects, not finish reasons). A chat reply
// that stopped after calling tools finishes with "tool_calls".
std::string_view finish_reason(FinishReason finish, bool called_tools = false);

// {"prompt_tokens", "completion_tokens", "total_tokens",
//  "prompt_tokens_details": {"cached_tokens"}}
Json usage_json(const Usage& usage);

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob",
// "bytes"}]}]}. A logprob of -inf is written as -9999.0, as OpenAI does.
Json chat_logprobs_json(std::span<const SampledToken> tokens, const TokenBytes& token_bytes);
// Completions: {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}],
// "text_offset"}; the sampled token is added to its top_logprobs map, as OpenAI does.
// text_offset counts bytes of the generated text from `text_offset` on.
Json completion_logprobs_json(std::span<const SampledToken> tokens,
                              const TokenBytes& token_bytes, int64_t text_offset);

// The non-streaming body: a chat.completion or a text_completion object.
Json response_json(const ResponseContext& context, const CompletionResult& result);

// JSON text, invalid UTF-8 replaced by U+FFFD (a token may be part of a character).
std::string dump_json(const Json& json);
// "data: <json>\n\n"
std::string sse_frame(const Json& json);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// Turns a request's events into SSE text, in the order above.
class ResponseStream {
 public:
  ResponseStream(ResponseContext context, bool include_usage);

  // The frames that open the stream (chat: the role chunk; completions: none). Called
  // by on_event if not called before.
  std::string start();
  // The frames for one event: a delta when it has text, then, on the final event, the
  // finish chunk, the usage chunk and [DONE] (or an error frame and [DONE]).
  std::string on_event(const EngineEvent& event);
  // Chat: the frames for an event's text, one chunk per delta.
  std::string chat_deltas(const EngineEvent& event);
  // An error frame and [DONE], for a failure outside the engine (e.g. the model unloaded).
  std::string on_error(const ApiError& error);
  bool done() const { return done_; }

 private:
  Json chunk(Json choices) const;
  Json choice(Json delta_or_text, std::span<const SampledToken> logprobs,
              std::optional<FinishReason> finish);

  ResponseContext context_;
  ChatDeltaStream deltas_;  // chat only
  std::vector<SampledToken> pending_logprobs_;  // chat: held until a delta carries them
  bool include_usage_;
  bool started_ = false;
  bool done_ = false;
  int64_t text_offset_ = 0;  // completions logprobs: bytes of token text sent so far
};

}  // namespace strata::openai
