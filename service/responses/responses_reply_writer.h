// The ReplyWriter of POST /v1/responses: the response object and its events
// (response_builder.h), with the reply split into reasoning, message and function_call
// items. A whole reply is built by the same builder, its events discarded.
//
// The connection's thread, as every ReplyWriter.
#pragma once

#include <optional>
#include <string>

#include "service/openai/chat_reply.h"
#include "service/openai/reply_writer.h"
#include "service/responses/response_builder.h"

namespace strata::responses {

class ResponsesReplyWriter final : public openai::ReplyWriter {
 public:
  ResponsesReplyWriter(ResponseBuilder builder, std::optional<openai::ReplySplit> split);

  std::string stream_start() override { return builder_.start(); }
  std::string stream_event(const EngineEvent& event) override;
  std::string stream_error(const openai::ApiError& error) override {
    return builder_.on_error(error);
  }

  void add_event(const EngineEvent& event) override;
  openai::Json body() override { return builder_.response(); }

 private:
  openai::ReplySplit split_;
  ReplyParser parser_;
  ResponseBuilder builder_;
};

}  // namespace strata::responses
