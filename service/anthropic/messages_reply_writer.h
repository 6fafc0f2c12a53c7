// The ReplyWriter of POST /v1/messages: Anthropic's message object and stream events
// (messages_response.h), with the reply split into thinking, text and tool_use blocks.
//
// The connection's thread, as every ReplyWriter.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "service/anthropic/messages_response.h"
#include "service/openai/chat_reply.h"
#include "service/openai/reply_writer.h"

namespace strata::anthropic {

class MessagesReplyWriter final : public openai::ReplyWriter {
 public:
  // `stop` is the request's stop_sequences, to name the one that ended the reply.
  MessagesReplyWriter(MessageContext context, std::optional<openai::ReplySplit> split,
                      std::vector<std::string> stop, int64_t prompt_tokens);
  ~MessagesReplyWriter() override;

  std::string stream_start() override;
  std::string stream_event(const EngineEvent& event) override;
  std::string stream_error(const openai::ApiError& error) override;

  void add_event(const EngineEvent& event) override;
  openai::Json body() override;

 private:
  MessageEnd end_of(const EngineEvent& final_event) const;

  MessageContext context_;
  openai::ReplySplit split_;
  ReplyParser parser_;  // streaming
  MessageStream stream_;
  std::vector<std::string> stop_;
  int64_t prompt_tokens_;
  // Whole reply: the text so far, and how it ended.
  std::string text_;
  MessageEnd end_;
  Usage usage_;
};

}  // namespace strata::anthropic
