#include "model/chat/reply/parsed_reply.h"

namespace strata {

void collect_reply_events(std::span<const ReplyEvent> events, ParsedReply& reply) {
  for (const ReplyEvent& event : events) {
    switch (event.kind) {
      case ReplyEventKind::kContent: reply.content += event.text; break;
      case ReplyEventKind::kReasoning: reply.reasoning += event.text; break;
      case ReplyEventKind::kToolCallBegin:
        if (reply.tool_calls.size() <= event.tool_index) {
          reply.tool_calls.resize(event.tool_index + 1);
        }
        reply.tool_calls[event.tool_index].name = event.text;
        break;
      case ReplyEventKind::kToolCallArguments:
        if (reply.tool_calls.size() <= event.tool_index) {
          reply.tool_calls.resize(event.tool_index + 1);
        }
        reply.tool_calls[event.tool_index].arguments += event.text;
        break;
    }
  }
}

ParsedReply parse_reply(const ReplyFormat& format, const ReplyParserOptions& options,
                        std::string_view text) {
  ReplyParser parser(format, options);
  ParsedReply reply;
  collect_reply_events(parser.feed(text), reply);
  collect_reply_events(parser.finish(), reply);
  return reply;
}

}  // namespace strata
