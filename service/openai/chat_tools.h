// The tool fields of a chat request: `tools`, `tool_choice`, `parallel_tool_calls`.
//
// tools: an array of {"type": "function", "function": {"name", "description"?,
// "parameters"? (a JSON schema), "strict"?}}, passed to the chat template as sent.
// tool_choice: "auto" (the default where tools are given), "none", "required", or
// {"type": "function", "function": {"name": ...}} naming one of the tools.
//
// Pure function: any thread.
#pragma once

#include <string>
#include <vector>

#include "model/chat/reply/tool_signature.h"

#include "service/openai/json_fields.h"

namespace strata::openai {

enum class ToolChoiceMode {
  kAuto,      // the model decides
  kNone,      // no call: the tools are not shown to the model
  kRequired,  // at least one call
  kFunction,  // a call of `ToolChoice::function`
};

struct ToolChoice {
  ToolChoiceMode mode = ToolChoiceMode::kAuto;
  std::string function = {};  // kFunction only
};

struct ChatTools {
  Json tools = Json::array();  // as sent; empty when the request has none
  ToolChoice choice;
  bool parallel_calls = true;

  // What the template sees: the tools, or None where there are none or the choice is none.
  bool offered() const { return !tools.empty() && choice.mode != ToolChoiceMode::kNone; }
};

// Throws BadRequest naming the field at fault ("tools.[2].function.name").
ChatTools read_chat_tools(const Json& body);

// Each tool's name and parameter types, for the reply parser (tools as read above).
std::vector<ToolSignature> tool_signatures(const Json& tools);

}  // namespace strata::openai
