// The Responses API's response object and its stream of events, built from the reply
// parser's events (model/chat/reply/): reasoning becomes a `reasoning` output item,
// text a `message` item with one output_text part, each tool call a `function_call`
// item, in the order the model wrote them.
//
// A stream is, each event with its `type` and a `sequence_number`:
//   response.created, response.in_progress            {"response": status in_progress}
//   per item: response.output_item.added               {"output_index", "item"}
//             response.content_part.added              (message and reasoning items)
//             response.output_text.delta | response.reasoning_text.delta |
//             response.function_call_arguments.delta   {"item_id", "output_index", "delta"}
//             ... .done events with the whole text, response.output_item.done
//   response.completed (or response.incomplete when max_output_tokens ended it)
// A failure mid-stream is an `error` event, and the stream ends there.
//
// Owned by one connection: the thread that runs it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/generate_request.h"
#include "model/chat/reply/reply_event.h"
#include "service/openai/json_fields.h"
#include "service/openai/openai_error.h"

namespace strata::responses {

class ResponseBuilder {
 public:
  // `echo`: the request's settings the response repeats (ResponsesRequest::echo).
  ResponseBuilder(std::string id, int64_t created_at, std::string model, openai::Json echo);

  // response.created and response.in_progress.
  std::string start();
  // The events for the parser's events: items opened, extended and closed.
  std::string on_reply_events(std::span<const ReplyEvent> events);
  // Closes the open item, then response.completed or response.incomplete.
  std::string finish(FinishReason finish, const Usage& usage);
  // An error event; nothing follows it.
  std::string on_error(const openai::ApiError& error);

  // The response object as it stands (whole after finish()).
  const openai::Json& response() const { return response_; }

 private:
  enum class ItemKind { kNone, kMessage, kReasoning, kFunctionCall };
  std::string event(const std::string& type, openai::Json data);
  std::string open_item(ItemKind kind, openai::Json item);
  std::string close_item();
  openai::Json& open_item_json() { return response_["output"].back(); }

  openai::Json response_;
  ItemKind open_ = ItemKind::kNone;
  std::string text_;  // the open item's text or arguments so far
  int64_t sequence_ = 0;
  bool done_ = false;
};

}  // namespace strata::responses
