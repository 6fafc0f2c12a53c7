#include "service/anthropic/messages_response.h"

#include "service/anthropic/anthropic_error.h"
#include "service/openai/random_id.h"
#include "service/openai/response_format.h"

namespace strata::anthropic {

using openai::Json;

namespace {

// A tool call's arguments as the object Anthropic's `input` is; text that does not
// parse (a call cut short by max_tokens) is kept whole under "_raw" rather than lost.
Json tool_input(const std::string& arguments) {
  if (arguments.empty()) return Json::object();
  Json input = Json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  if (input.is_object()) return input;
  return Json{{"_raw", arguments}};
}

Json message_header(const MessageContext& context) {
  return Json{{"id", context.id},     {"type", "message"}, {"role", "assistant"},
              {"model", context.model}, {"content", Json::array()}};
}

}  // namespace

std::string_view stop_reason(const MessageEnd& end) {
  // A call cut short by max_tokens is no call to run: the client must see why it ended.
  if (end.finish == FinishReason::kLength) return "max_tokens";
  if (end.called_tools) return "tool_use";
  if (end.stop_sequence) return "stop_sequence";
  return "end_turn";
}

Json usage_json(const Usage& usage) {
  return Json{{"input_tokens", usage.prompt_tokens - usage.cached_prompt_tokens},
              {"output_tokens", usage.completion_tokens},
              {"cache_read_input_tokens", usage.cached_prompt_tokens},
              {"cache_creation_input_tokens", 0}};
}

Json message_json(const MessageContext& context, const ParsedReply& reply,
                  const MessageEnd& end, const Usage& usage) {
  Json message = message_header(context);
  Json& content = message["content"];
  if (!reply.reasoning.empty()) {
    content.push_back({{"type", "thinking"}, {"thinking", reply.reasoning}, {"signature", ""}});
  }
  if (!reply.content.empty()) content.push_back({{"type", "text"}, {"text", reply.content}});
  for (const ParsedToolCall& call : reply.tool_calls) {
    content.push_back({{"type", "tool_use"},
                       {"id", openai::random_id("toolu_")},
                       {"name", call.name},
                       {"input", tool_input(call.arguments)}});
  }
  message["stop_reason"] = stop_reason(end);
  message["stop_sequence"] = end.stop_sequence ? Json(*end.stop_sequence) : Json();
  message["usage"] = usage_json(usage);
  return message;
}

std::string event_frame(std::string_view name, const Json& data) {
  std::string frame = "event: ";
  frame += name;
  frame += "\ndata: ";
  frame += openai::dump_json(data);
  frame += "\n\n";
  return frame;
}

MessageStream::MessageStream(MessageContext context) : context_(std::move(context)) {}

std::string MessageStream::start(int64_t input_tokens) {
  Json message = message_header(context_);
  message["stop_reason"] = nullptr;
  message["stop_sequence"] = nullptr;
  // How much of the prompt the cache held is known only at the end (message_delta).
  message["usage"] = {{"input_tokens", input_tokens},
                      {"output_tokens", 0},
                      {"cache_read_input_tokens", 0},
                      {"cache_creation_input_tokens", 0}};
  return event_frame("message_start", {{"type", "message_start"}, {"message", message}}) +
         event_frame("ping", {{"type", "ping"}});
}

std::string MessageStream::open_block(BlockKind kind, const Json& content_block) {
  std::string out = close_block();
  open_ = kind;
  ++index_;
  out += event_frame("content_block_start", {{"type", "content_block_start"},
                                             {"index", index_},
                                             {"content_block", content_block}});
  return out;
}

std::string MessageStream::close_block() {
  if (open_ == BlockKind::kNone) return {};
  std::string out;
  if (open_ == BlockKind::kThinking) {
    // The SDKs expect a signature before a thinking block closes; Strata signs nothing.
    out += delta({{"type", "signature_delta"}, {"signature", ""}});
  }
  open_ = BlockKind::kNone;
  return out + event_frame("content_block_stop",
                           {{"type", "content_block_stop"}, {"index", index_}});
}

std::string MessageStream::delta(const Json& delta) {
  return event_frame("content_block_delta",
                     {{"type", "content_block_delta"}, {"index", index_}, {"delta", delta}});
}

std::string MessageStream::on_reply_events(std::span<const ReplyEvent> events) {
  if (done_) return {};
  std::string out;
  for (const ReplyEvent& event : events) {
    switch (event.kind) {
      case ReplyEventKind::kContent:
        if (open_ != BlockKind::kText) out += open_block(BlockKind::kText, {{"type", "text"}, {"text", ""}});
        out += delta({{"type", "text_delta"}, {"text", event.text}});
        break;
      case ReplyEventKind::kReasoning:
        if (open_ != BlockKind::kThinking) {
          out += open_block(BlockKind::kThinking,
                            {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
        }
        out += delta({{"type", "thinking_delta"}, {"thinking", event.text}});
        break;
      case ReplyEventKind::kToolCallBegin:
        out += open_block(BlockKind::kToolUse, {{"type", "tool_use"},
                                                {"id", openai::random_id("toolu_")},
                                                {"name", event.text},
                                                {"input", Json::object()}});
        open_tool_ = event.tool_index;
        called_tools_ = true;
        break;
      case ReplyEventKind::kToolCallArguments:
        // Fragments belong to the open call: a parser reports a call's arguments
        // before the next call begins.
        if (open_ == BlockKind::kToolUse && open_tool_ == event.tool_index) {
          out += delta({{"type", "input_json_delta"}, {"partial_json", event.text}});
        }
        break;
    }
  }
  return out;
}

std::string MessageStream::finish(const MessageEnd& end, const Usage& usage) {
  if (done_) return {};
  done_ = true;
  MessageEnd effective = end;
  effective.called_tools = end.called_tools || called_tools_;
  std::string out = close_block();
  out += event_frame(
      "message_delta",
      {{"type", "message_delta"},
       {"delta", {{"stop_reason", stop_reason(effective)},
                  {"stop_sequence", end.stop_sequence ? Json(*end.stop_sequence) : Json()}}},
       {"usage", usage_json(usage)}});
  return out + event_frame("message_stop", {{"type", "message_stop"}});
}

std::string MessageStream::on_error(const openai::ApiError& error) {
  if (done_) return {};
  done_ = true;
  return event_frame("error", anthropic::error_json(error));
}

}  // namespace strata::anthropic
