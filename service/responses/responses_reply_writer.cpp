#include "service/responses/responses_reply_writer.h"

#include <vector>

#include "common/str_cat.h"

namespace strata::responses {

ResponsesReplyWriter::ResponsesReplyWriter(ResponseBuilder builder,
                                           std::optional<openai::ReplySplit> split)
    : split_(split.value_or(openai::ReplySplit{})),
      parser_(split_.format, split_.options),
      builder_(std::move(builder)) {}

std::string ResponsesReplyWriter::stream_event(const EngineEvent& event) {
  if (event.finish == FinishReason::kError) {
    return builder_.on_error(openai::server_error(
        str_cat("Generation failed: ", event.error.empty() ? "unknown error" : event.error)));
  }
  std::vector<ReplyEvent> events = parser_.feed(event.text);
  if (event.finish) {
    std::vector<ReplyEvent> rest = parser_.finish();
    events.insert(events.end(), rest.begin(), rest.end());
  }
  std::string out = builder_.on_reply_events(events);
  if (event.finish) out += builder_.finish(*event.finish, event.usage);
  return out;
}

void ResponsesReplyWriter::add_event(const EngineEvent& event) {
  if (event.finish == FinishReason::kError) return;  // answered with an error instead
  stream_event(event);
}

}  // namespace strata::responses
