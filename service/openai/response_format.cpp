#include "service/openai/response_format.h"

#include <cmath>
#include <utility>

namespace strata::openai {
namespace {

constexpr double kMinLogprob = -9999.0;  // OpenAI's stand-in for -inf

double finite_logprob(float logprob) {
  return std::isfinite(logprob) ? static_cast<double>(logprob) : kMinLogprob;
}

Json bytes_json(const std::string& bytes) {
  Json out = Json::array();
  for (unsigned char c : bytes) out.push_back(static_cast<int>(c));
  return out;
}

bool is_chat(const ResponseContext& context) {
  return context.endpoint == Endpoint::kChatCompletions;
}

const char* object_name(const ResponseContext& context, bool chunk) {
  if (is_chat(context)) return chunk ? "chat.completion.chunk" : "chat.completion";
  return "text_completion";  // the same for its chunks
}

Json header(const ResponseContext& context, bool chunk) {
  Json out;
  out["id"] = context.id;
  out["object"] = object_name(context, chunk);
  out["created"] = context.created;
  out["model"] = context.model;
  return out;
}

int64_t token_bytes_total(std::span<const SampledToken> tokens, const TokenBytes& token_bytes) {
  int64_t n = 0;
  for (const SampledToken& t : tokens) n += static_cast<int64_t>(token_bytes(t.id).size());
  return n;
}

}  // namespace

void accumulate(CompletionResult& result, const EngineEvent& event) {
  result.text += event.text;
  result.logprobs.insert(result.logprobs.end(), event.logprobs.begin(), event.logprobs.end());
  if (event.finish) {
    result.finish = *event.finish;
    result.usage = event.usage;
  }
}

std::string_view finish_reason(FinishReason finish, bool called_tools) {
  switch (finish) {
    case FinishReason::kStop: return called_tools ? "tool_calls" : "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "abort";
    case FinishReason::kError: return "error";
  }
  return "stop";
}

Json usage_json(const Usage& usage) {
  Json out;
  out["prompt_tokens"] = usage.prompt_tokens;
  out["completion_tokens"] = usage.completion_tokens;
  out["total_tokens"] = usage.prompt_tokens + usage.completion_tokens;
  out["prompt_tokens_details"] = Json{{"cached_tokens", usage.cached_prompt_tokens}};
  return out;
}

Json chat_logprobs_json(std::span<const SampledToken> tokens, const TokenBytes& token_bytes) {
  Json content = Json::array();
  for (const SampledToken& t : tokens) {
    std::string bytes = token_bytes(t.id);
    Json top = Json::array();
    for (const TokenLogprob& alt : t.top) {
      std::string alt_bytes = token_bytes(alt.id);
      Json entry;
      entry["token"] = alt_bytes;
      entry["logprob"] = finite_logprob(alt.logprob);
      entry["bytes"] = bytes_json(alt_bytes);
      top.push_back(std::move(entry));
    }
    Json entry;
    entry["token"] = bytes;
    entry["logprob"] = finite_logprob(t.logprob);
    entry["bytes"] = bytes_json(bytes);
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return Json{{"content", std::move(content)}};
}

Json completion_logprobs_json(std::span<const SampledToken> tokens,
                              const TokenBytes& token_bytes, int64_t text_offset) {
  Json out;
  out["tokens"] = Json::array();
  out["token_logprobs"] = Json::array();
  out["top_logprobs"] = Json::array();
  out["text_offset"] = Json::array();
  for (const SampledToken& t : tokens) {
    std::string bytes = token_bytes(t.id);
    Json top = Json::object();
    for (const TokenLogprob& alt : t.top) {
      std::string alt_bytes = token_bytes(alt.id);
      if (!top.contains(alt_bytes)) top[alt_bytes] = finite_logprob(alt.logprob);
    }
    if (!top.contains(bytes)) top[bytes] = finite_logprob(t.logprob);
    out["tokens"].push_back(bytes);
    out["token_logprobs"].push_back(finite_logprob(t.logprob));
    out["top_logprobs"].push_back(std::move(top));
    out["text_offset"].push_back(text_offset);
    text_offset += static_cast<int64_t>(bytes.size());
  }
  return out;
}

Json response_json(const ResponseContext& context, const CompletionResult& result) {
  Json choice;
  choice["index"] = 0;
  bool called_tools = false;
  if (is_chat(context)) {
    choice["message"] = chat_message_json(result.text, context.split);
    called_tools = reply_called_tools(choice["message"]);
    choice["logprobs"] =
        context.logprobs ? chat_logprobs_json(result.logprobs, context.token_bytes) : Json();
  } else {
    choice["text"] = result.text;
    choice["logprobs"] = context.logprobs
                             ? completion_logprobs_json(result.logprobs, context.token_bytes, 0)
                             : Json();
  }
  choice["finish_reason"] = finish_reason(result.finish, called_tools);
  Json out = header(context, /*chunk=*/false);
  out["choices"] = Json::array({std::move(choice)});
  out["usage"] = usage_json(result.usage);
  return out;
}

std::string dump_json(const Json& json) {
  return json.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

std::string sse_frame(const Json& json) { return "data: " + dump_json(json) + "\n\n"; }

ResponseStream::ResponseStream(ResponseContext context, bool include_usage)
    : context_(std::move(context)), deltas_(context_.split), include_usage_(include_usage) {}

Json ResponseStream::chunk(Json choices) const {
  Json out = header(context_, /*chunk=*/true);
  out["choices"] = std::move(choices);
  if (include_usage_) out["usage"] = nullptr;
  return out;
}

Json ResponseStream::choice(Json delta_or_text, std::span<const SampledToken> logprobs,
                            std::optional<FinishReason> finish) {
  Json out;
  out["index"] = 0;
  Json logprobs_json;  // null
  if (is_chat(context_)) {
    out["delta"] = std::move(delta_or_text);
    if (context_.logprobs && !logprobs.empty()) {
      logprobs_json = chat_logprobs_json(logprobs, context_.token_bytes);
    }
  } else {
    out["text"] = std::move(delta_or_text);
    if (context_.logprobs && !logprobs.empty()) {
      logprobs_json = completion_logprobs_json(logprobs, context_.token_bytes, text_offset_);
      text_offset_ += token_bytes_total(logprobs, context_.token_bytes);
    }
  }
  out["logprobs"] = std::move(logprobs_json);
  out["finish_reason"] = finish ? Json(finish_reason(*finish, deltas_.called_tools())) : Json();
  return out;
}

std::string ResponseStream::start() {
  if (started_) return {};
  started_ = true;
  if (!is_chat(context_)) return {};
  return sse_frame(
      chunk(Json::array({choice(Json{{"role", "assistant"}, {"content", ""}}, {}, {})})));
}

std::string ResponseStream::on_event(const EngineEvent& event) {
  if (done_) return {};
  std::string out = start();
  if (event.finish == FinishReason::kError) {
    // Text that came with the failing event is dropped: the reply is broken anyway.
    return out + on_error(server_error(event.error.empty() ? "generation failed" : event.error));
  }
  if (is_chat(context_)) {
    out += chat_deltas(event);
  } else if (!event.text.empty() || !event.logprobs.empty()) {
    out += sse_frame(chunk(Json::array({choice(Json(event.text), event.logprobs, {})})));
  }
  if (event.finish) {
    Json empty = is_chat(context_) ? Json::object() : Json("");
    out += sse_frame(chunk(Json::array({choice(std::move(empty), {}, event.finish)})));
    if (include_usage_) {
      Json last = header(context_, /*chunk=*/true);
      last["choices"] = Json::array();
      last["usage"] = usage_json(event.usage);
      out += sse_frame(last);
    }
    out += kSseDone;
    done_ = true;
  }
  return out;
}

std::string ResponseStream::chat_deltas(const EngineEvent& event) {
  pending_logprobs_.insert(pending_logprobs_.end(), event.logprobs.begin(), event.logprobs.end());
  std::vector<Json> deltas = deltas_.deltas(event.text, event.finish.has_value());
  // Without a split every event with a token gets its chunk, as before; with one, the
  // parser may hold text back, and the tokens' logprobs wait for the next delta.
  // At the end, logprobs still held go out on an empty delta rather than be lost.
  if (deltas.empty() && !pending_logprobs_.empty() && (!context_.split || event.finish)) {
    deltas.push_back({{"content", ""}});
  }
  std::string out;
  for (Json& delta : deltas) {
    out += sse_frame(chunk(Json::array({choice(std::move(delta), pending_logprobs_, {})})));
    pending_logprobs_.clear();
  }
  return out;
}

std::string ResponseStream::on_error(const ApiError& error) {
  if (done_) return {};
  done_ = true;
  return sse_frame(error_json(error)) + std::string(kSseDone);
}

}  // namespace strata::openai
