// ReplyWriter: how one API answers one generation — as server-sent events while the
// engine generates, or as one JSON body at the end. Each API has its own
// (chat completions, completions, Anthropic messages, responses); the generation
// endpoint drives whichever the request came in on.
//
// Streaming: stream_start() once, then stream_event() for every engine event up to and
// including the final one (or stream_error() for a failure outside the engine). Whole:
// add_event() for every event, then body() once.
//
// One per request, owned by its connection: the thread that runs it (its Asio strand).
#pragma once

#include <string>

#include "engine/generate_request.h"
#include "service/openai/json_fields.h"
#include "service/openai/openai_error.h"

namespace strata::openai {

class ReplyWriter {
 public:
  virtual ~ReplyWriter() = default;

  // The frames that open the stream.
  virtual std::string stream_start() = 0;
  // The frames for one event; on the final event, those that close the stream.
  virtual std::string stream_event(const EngineEvent& event) = 0;
  // The frames that end the stream with `error`; nothing may follow them.
  virtual std::string stream_error(const ApiError& error) = 0;

  virtual void add_event(const EngineEvent& event) = 0;
  // The response body once the final event was added (not called for an engine error
  // or a cancel: the endpoint answers those with an error).
  virtual Json body() = 0;
};

}  // namespace strata::openai
