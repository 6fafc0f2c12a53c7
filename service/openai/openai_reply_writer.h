// The ReplyWriter of /v1/chat/completions and /v1/completions: OpenAI's chunks and
// objects (response_format.h).
//
// The connection's thread, as every ReplyWriter.
#pragma once

#include "service/openai/reply_writer.h"
#include "service/openai/response_format.h"

namespace strata::openai {

class OpenAiReplyWriter final : public ReplyWriter {
 public:
  OpenAiReplyWriter(ResponseContext context, bool include_usage);

  std::string stream_start() override { return stream_.start(); }
  std::string stream_event(const EngineEvent& event) override { return stream_.on_event(event); }
  std::string stream_error(const ApiError& error) override { return stream_.on_error(error); }

  void add_event(const EngineEvent& event) override { accumulate(result_, event); }
  Json body() override { return response_json(context_, result_); }

 private:
  ResponseContext context_;
  ResponseStream stream_;
  CompletionResult result_;
};

}  // namespace strata::openai
