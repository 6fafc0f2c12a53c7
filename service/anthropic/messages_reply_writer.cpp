#include "service/anthropic/messages_reply_writer.h"

#include "common/str_cat.h"
#include "model/chat/reply/parsed_reply.h"

namespace strata::anthropic {

MessagesReplyWriter::MessagesReplyWriter(MessageContext context,
                                         std::optional<openai::ReplySplit> split,
                                         std::vector<std::string> stop, int64_t prompt_tokens)
    : context_(context),
      split_(split.value_or(openai::ReplySplit{})),
      parser_(split_.format, split_.options),
      stream_(std::move(context)),
      stop_(std::move(stop)),
      prompt_tokens_(prompt_tokens) {}

MessagesReplyWriter::~MessagesReplyWriter() = default;

MessageEnd MessagesReplyWriter::end_of(const EngineEvent& final_event) const {
  MessageEnd end{.finish = final_event.finish.value_or(FinishReason::kStop)};
  if (final_event.matched_stop >= 0 &&
      static_cast<size_t>(final_event.matched_stop) < stop_.size()) {
    end.stop_sequence = stop_[static_cast<size_t>(final_event.matched_stop)];
  }
  return end;
}

std::string MessagesReplyWriter::stream_start() { return stream_.start(prompt_tokens_); }

std::string MessagesReplyWriter::stream_event(const EngineEvent& event) {
  if (stream_.done()) return {};
  if (event.finish == FinishReason::kError) {
    return stream_.on_error(openai::server_error(
        str_cat("Generation failed: ", event.error.empty() ? "unknown error" : event.error)));
  }
  std::vector<ReplyEvent> events = parser_.feed(event.text);
  if (event.finish) {
    std::vector<ReplyEvent> rest = parser_.finish();
    events.insert(events.end(), rest.begin(), rest.end());
  }
  std::string out = stream_.on_reply_events(events);
  if (event.finish) out += stream_.finish(end_of(event), event.usage);
  return out;
}

std::string MessagesReplyWriter::stream_error(const openai::ApiError& error) {
  return stream_.on_error(error);
}

void MessagesReplyWriter::add_event(const EngineEvent& event) {
  text_ += event.text;
  if (event.finish) {
    end_ = end_of(event);
    usage_ = event.usage;
  }
}

openai::Json MessagesReplyWriter::body() {
  const ParsedReply reply = parse_reply(split_.format, split_.options, text_);
  MessageEnd end = end_;
  end.called_tools = !reply.tool_calls.empty();
  return message_json(context_, reply, end, usage_);
}

}  // namespace strata::anthropic
