// The body of POST /v1/messages (and /v1/messages/count_tokens), Anthropic's Messages
// API, read into the chat request Strata runs for /v1/chat/completions.
//
// Accepted: model, max_tokens (required, except for count_tokens), messages (role user
// or assistant; content a string or blocks: text, tool_use, tool_result, thinking,
// redacted_thinking), system (a string or text blocks), stop_sequences, stream,
// temperature (0 to 1, as Anthropic's API allows), top_p, top_k, metadata (ignored),
// tools ({name, description, input_schema}), tool_choice ({type: auto | any | tool |
// none, name, disable_parallel_tool_use}), thinking ({type: enabled | disabled}, passed
// to the chat template as enable_thinking). Unknown fields are ignored; other block types (image,
// document) and server tools are refused with a 400 naming them.
//
// The translation, block by block:
//   system                      -> a system message first
//   user text blocks            -> one user message, texts joined with "\n"
//   user tool_result blocks     -> tool messages (tool_call_id = tool_use_id), before
//                                  the user's text
//   assistant thinking          -> reasoning_content
//   assistant text              -> content (blocks joined as written, without a separator)
//   assistant tool_use          -> tool_calls (id, name, arguments = input)
//
// Pure function: any thread.
#pragma once

#include <variant>

#include "service/openai/chat_completion_request.h"

namespace strata::anthropic {

enum class MessagesEndpoint { kCreate, kCountTokens };

// The chat request, or a 400 whose param names the field at fault
// ("messages.[1].content.[0].type"). Never throws.
std::variant<openai::ChatCompletionRequest, openai::ApiError> parse_messages_request(
    const openai::Json& body, MessagesEndpoint endpoint);

}  // namespace strata::anthropic
