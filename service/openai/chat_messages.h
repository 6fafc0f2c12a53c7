// The `messages` of a chat request, checked and put in the shape chat templates read.
//
// Roles: system, developer (read as system), user, assistant, tool. Each message keeps
// the fields templates use — role, content, name, tool_calls, tool_call_id,
// reasoning_content — in the client's order, with three changes so that every template
// sees what it was written for:
//   - content given as an array of {"type": "text", "text": ...} parts becomes one
//     string, the parts joined with "\n" (as vLLM joins them);
//   - an assistant message's missing content becomes null (it may carry only tool calls);
//   - a tool call's `arguments`, which the OpenAI API sends as a JSON string, becomes the
//     object it encodes (templates write it with `| tojson`, as transformers expects);
//     a string that is not a JSON object stays a string.
//
// Pure function: any thread.
#pragma once

#include "service/openai/json_fields.h"

namespace strata::openai {

// The messages ready for the template. Throws BadRequest naming the field at fault
// ("messages.[1].tool_calls.[0].function.name").
Json read_chat_messages(const Json* messages);

}  // namespace strata::openai
