#include "service/openai/chat_reply.h"

#include "model/chat/reply/parsed_reply.h"
#include "service/openai/random_id.h"

namespace strata::openai {

Json chat_message_json(std::string_view text, const std::optional<ReplySplit>& split) {
  Json message = {{"role", "assistant"}};
  if (!split) {
    message["content"] = text;
    message["refusal"] = nullptr;
    return message;
  }
  const ParsedReply reply = parse_reply(split->format, split->options, text);
  // OpenAI sends null content beside tool calls when the model wrote no text.
  message["content"] = reply.content.empty() && !reply.tool_calls.empty()
                           ? Json()
                           : Json(reply.content);
  message["refusal"] = nullptr;
  if (!reply.reasoning.empty()) message["reasoning_content"] = reply.reasoning;
  if (!reply.tool_calls.empty()) {
    Json calls = Json::array();
    for (const ParsedToolCall& call : reply.tool_calls) {
      calls.push_back({{"id", random_id("call_")},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  return message;
}

bool reply_called_tools(const Json& message) {
  const auto calls = message.find("tool_calls");
  return calls != message.end() && !calls->empty();
}

ChatDeltaStream::ChatDeltaStream(std::optional<ReplySplit> split) {
  if (split) parser_ = std::make_unique<ReplyParser>(split->format, std::move(split->options));
}

ChatDeltaStream::~ChatDeltaStream() = default;

std::vector<Json> ChatDeltaStream::deltas(std::string_view text, bool final) {
  std::vector<Json> out;
  if (!parser_) {
    if (!text.empty()) out.push_back({{"content", text}});
    return out;
  }
  std::vector<ReplyEvent> events = parser_->feed(text);
  if (final) {
    std::vector<ReplyEvent> rest = parser_->finish();
    events.insert(events.end(), rest.begin(), rest.end());
  }
  for (const ReplyEvent& event : events) {
    switch (event.kind) {
      case ReplyEventKind::kContent: out.push_back({{"content", event.text}}); break;
      case ReplyEventKind::kReasoning: out.push_back({{"reasoning_content", event.text}}); break;
      case ReplyEventKind::kToolCallBegin:
        called_tools_ = true;
        out.push_back({{"tool_calls",
                        Json::array({{{"index", event.tool_index},
                                      {"id", random_id("call_")},
                                      {"type", "function"},
                                      {"function", {{"name", event.text}, {"arguments", ""}}}}})}});
        break;
      case ReplyEventKind::kToolCallArguments:
        out.push_back({{"tool_calls", Json::array({{{"index", event.tool_index},
                                                    {"function", {{"arguments", event.text}}}}})}});
        break;
    }
  }
  return out;
}

}  // namespace strata::openai
