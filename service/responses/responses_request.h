// The body of POST /v1/responses, OpenAI's Responses API without stored state, read into
// the chat request Strata runs for /v1/chat/completions.
//
// Accepted: model, input (a string, or items: messages with role user, system,
// developer or assistant and content a string or input_text / output_text parts;
// function_call; function_call_output; reasoning), instructions (a system message
// first), tools (function tools: {type, name, description, parameters, strict}),
// tool_choice, parallel_tool_calls, text.format (text, json_object, json_schema),
// reasoning.effort (the template's reasoning_effort), max_output_tokens, temperature,
// top_p, stream, store and metadata. Strata keeps no responses: previous_response_id,
// conversation and item references are refused with a 400 that says to send the whole
// conversation in `input`. Other item, part and tool types are refused naming them.
//
// Pure function: any thread.
#pragma once

#include <variant>

#include "service/openai/chat_completion_request.h"

namespace strata::responses {

struct ResponsesRequest {
  openai::ChatCompletionRequest chat;
  // The request's settings that a response object repeats: instructions,
  // max_output_tokens, tools, tool_choice, parallel_tool_calls, temperature, top_p,
  // text, reasoning, metadata (each null or its default where not given).
  openai::Json echo;
};

// The request, or a 400 whose param names the field at fault ("input.[2].call_id").
// Never throws.
std::variant<ResponsesRequest, openai::ApiError> parse_responses_request(
    const openai::Json& body);

}  // namespace strata::responses
