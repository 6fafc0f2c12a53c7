#include "service/responses/responses_request.h"

#include <exception>
#include <string>

#include "common/str_cat.h"

namespace strata::responses {
namespace {

using openai::find_field;
using openai::Json;
using openai::read_string;
using openai::throw_bad_request;

[[noreturn]] void needs_stored_state(const std::string& field) {
  throw_bad_request(str_cat(field, " is not supported: Strata keeps no responses. Send the "
                            "whole conversation in input (with store: false)."),
                    field);
}

std::string required_string(const Json& object, const char* key, const std::string& param) {
  auto value = read_string(find_field(object, key), param + "." + key);
  if (!value) throw_bad_request(str_cat(param, ".", key, " is required"), param + "." + key);
  return *value;
}

// A string, or text parts (input_text, output_text) joined with "\n".
std::string read_text(const Json& content, const std::string& param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw_bad_request(param + " must be a string or an array", param);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part_param = str_cat(param, ".[", i, "]");
    const Json& part = content[i];
    if (!part.is_object()) throw_bad_request(part_param + " must be an object", part_param);
    const std::string type = required_string(part, "type", part_param);
    if (type != "input_text" && type != "output_text") {
      throw_bad_request(str_cat("Content parts of type '", type, "' are not supported here"),
                        part_param + ".type");
    }
    if (i > 0) text += '\n';
    text += required_string(part, "text", part_param);
  }
  return text;
}

// The conversation so far, turning items into chat messages. Function calls join the
// assistant message just before them, reasoning the assistant message after it.
class MessageBuilder {
 public:
  void add_item(const Json& item, const std::string& param);
  Json take() { return std::move(messages_); }

 private:
  Json& assistant_for_call();
  void add_message(const Json& item, const std::string& param);

  Json messages_ = Json::array();
  std::string pending_reasoning_;
};

Json& MessageBuilder::assistant_for_call() {
  if (messages_.empty() || messages_.back()["role"] != "assistant") {
    messages_.push_back({{"role", "assistant"}, {"content", ""}});
  }
  Json& message = messages_.back();
  if (!pending_reasoning_.empty()) {
    message["reasoning_content"] = std::move(pending_reasoning_);
    pending_reasoning_.clear();
  }
  if (!message.contains("tool_calls")) message["tool_calls"] = Json::array();
  return message;
}

void MessageBuilder::add_message(const Json& item, const std::string& param) {
  std::string role = required_string(item, "role", param);
  if (role == "developer") role = "system";
  if (role != "user" && role != "system" && role != "assistant") {
    throw_bad_request(str_cat("Invalid role '", role, "': expected 'user', 'system', "
                              "'developer' or 'assistant'"),
                      param + ".role");
  }
  const Json* content = find_field(item, "content");
  if (content == nullptr) throw_bad_request(param + ".content is required", param + ".content");
  Json message = {{"role", role}, {"content", read_text(*content, param + ".content")}};
  if (role == "assistant" && !pending_reasoning_.empty()) {
    message["reasoning_content"] = std::move(pending_reasoning_);
    pending_reasoning_.clear();
  }
  messages_.push_back(std::move(message));
}

void MessageBuilder::add_item(const Json& item, const std::string& param) {
  if (!item.is_object()) throw_bad_request(param + " must be an object", param);
  const std::string type = read_string(find_field(item, "type"), param + ".type").value_or("message");
  if (type == "message") {
    add_message(item, param);
  } else if (type == "function_call") {
    assistant_for_call()["tool_calls"].push_back(
        {{"id", required_string(item, "call_id", param)},
         {"type", "function"},
         {"function", {{"name", required_string(item, "name", param)},
                       {"arguments", required_string(item, "arguments", param)}}}});
  } else if (type == "function_call_output") {
    const Json* output = find_field(item, "output");
    if (output == nullptr) throw_bad_request(param + ".output is required", param + ".output");
    messages_.push_back({{"role", "tool"},
                         {"tool_call_id", required_string(item, "call_id", param)},
                         {"content", read_text(*output, param + ".output")}});
  } else if (type == "reasoning") {
    // The model's own reasoning text where the client kept it; a summary otherwise.
    for (const char* key : {"content", "summary"}) {
      const Json* parts = find_field(item, key);
      if (parts == nullptr || !parts->is_array() || parts->empty()) continue;
      for (const Json& part : *parts) {
        if (part.is_object() && part.contains("text") && part["text"].is_string()) {
          pending_reasoning_ += part["text"].get<std::string>();
        }
      }
      break;
    }
  } else if (type == "item_reference") {
    needs_stored_state(param);
  } else {
    throw_bad_request(str_cat("Input items of type '", type, "' are not supported"),
                      param + ".type");
  }
}

Json translate_input(const Json& body) {
  MessageBuilder builder;
  if (auto instructions = read_string(find_field(body, "instructions"), "instructions")) {
    builder.add_item({{"role", "system"}, {"content", *instructions}}, "instructions");
  }
  const Json* input = find_field(body, "input");
  if (input == nullptr) throw_bad_request("input is required", "input");
  if (input->is_string()) {
    builder.add_item({{"role", "user"}, {"content", *input}}, "input");
  } else if (input->is_array() && !input->empty()) {
    for (size_t i = 0; i < input->size(); ++i) {
      builder.add_item((*input)[i], str_cat("input.[", i, "]"));
    }
  } else {
    throw_bad_request("input must be a string or a non-empty array of items", "input");
  }
  return builder.take();
}

Json translate_tools(const Json& tools) {
  if (!tools.is_array()) throw_bad_request("tools must be an array", "tools");
  Json out = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string param = str_cat("tools.[", i, "]");
    const Json& tool = tools[i];
    if (!tool.is_object()) throw_bad_request(param + " must be an object", param);
    const std::string type = required_string(tool, "type", param);
    if (type != "function") {
      throw_bad_request(str_cat("Tools of type '", type, "' are not supported: only "
                                "'function' tools are"),
                        param + ".type");
    }
    Json function = Json::object();
    for (const char* key : {"name", "description", "parameters", "strict"}) {
      if (const Json* value = find_field(tool, key)) function[key] = *value;
    }
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

Json translate_tool_choice(const Json& choice) {
  if (choice.is_string()) return choice;
  if (!choice.is_object()) throw_bad_request("tool_choice must be a string or an object", "tool_choice");
  const std::string type = required_string(choice, "type", "tool_choice");
  if (type != "function") {
    throw_bad_request(str_cat("tool_choice of type '", type, "' is not supported"),
                      "tool_choice.type");
  }
  return {{"type", "function"},
          {"function", {{"name", required_string(choice, "name", "tool_choice")}}}};
}

// text.format, as chat completions' response_format.
void translate_text(const Json& text, Json& chat) {
  if (!text.is_object()) throw_bad_request("text must be an object", "text");
  const Json* format = find_field(text, "format");
  if (format == nullptr) return;
  if (!format->is_object()) throw_bad_request("text.format must be an object", "text.format");
  const std::string type = required_string(*format, "type", "text.format");
  if (type == "text") return;
  if (type == "json_object") {
    chat["response_format"] = {{"type", "json_object"}};
  } else if (type == "json_schema") {
    Json schema = {{"name", read_string(find_field(*format, "name"), "text.format.name")
                                .value_or("response")}};
    if (const Json* value = find_field(*format, "schema")) schema["schema"] = *value;
    if (const Json* strict = find_field(*format, "strict")) schema["strict"] = *strict;
    chat["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
  } else {
    throw_bad_request(str_cat("Invalid text.format type '", type,
                              "': expected 'text', 'json_object' or 'json_schema'"),
                      "text.format.type");
  }
}

Json translate(const Json& body) {
  for (const char* key : {"previous_response_id", "conversation"}) {
    if (find_field(body, key) != nullptr) needs_stored_state(key);
  }
  Json chat = {{"messages", translate_input(body)}};
  if (const Json* model = find_field(body, "model")) chat["model"] = *model;
  for (const char* key : {"temperature", "top_p", "stream", "parallel_tool_calls"}) {
    if (const Json* value = find_field(body, key)) chat[key] = *value;
  }
  if (const Json* max = find_field(body, "max_output_tokens")) chat["max_tokens"] = *max;
  if (const Json* tools = find_field(body, "tools")) chat["tools"] = translate_tools(*tools);
  if (const Json* choice = find_field(body, "tool_choice")) {
    chat["tool_choice"] = translate_tool_choice(*choice);
  }
  if (const Json* text = find_field(body, "text")) translate_text(*text, chat);
  if (const Json* reasoning = find_field(body, "reasoning")) {
    if (!reasoning->is_object()) throw_bad_request("reasoning must be an object", "reasoning");
    if (auto effort = read_string(find_field(*reasoning, "effort"), "reasoning.effort")) {
      chat["reasoning_effort"] = *effort;
    }
  }
  // The final response.completed event carries the usage.
  if (chat.value("stream", false)) chat["stream_options"] = {{"include_usage", true}};
  return chat;
}

Json echo_of(const Json& body) {
  Json echo = Json::object();
  for (const char* key : {"instructions", "max_output_tokens", "temperature", "top_p"}) {
    const Json* value = find_field(body, key);
    echo[key] = value ? *value : Json();
  }
  const Json* tools = find_field(body, "tools");
  echo["tools"] = tools ? *tools : Json::array();
  const Json* choice = find_field(body, "tool_choice");
  echo["tool_choice"] = choice ? *choice : Json("auto");
  const Json* parallel = find_field(body, "parallel_tool_calls");
  echo["parallel_tool_calls"] = parallel ? *parallel : Json(true);
  const Json* text = find_field(body, "text");
  echo["text"] = text ? *text : Json{{"format", {{"type", "text"}}}};
  const Json* reasoning = find_field(body, "reasoning");
  echo["reasoning"] = reasoning ? *reasoning : Json{{"effort", nullptr}, {"summary", nullptr}};
  const Json* metadata = find_field(body, "metadata");
  echo["metadata"] = metadata ? *metadata : Json::object();
  return echo;
}

}  // namespace

std::variant<ResponsesRequest, openai::ApiError> parse_responses_request(const Json& body) {
  try {
    if (!body.is_object()) return openai::invalid_request("The request body must be a JSON object.");
    auto chat = openai::parse_chat_completion_request(translate(body));
    if (auto* error = std::get_if<openai::ApiError>(&chat)) return std::move(*error);
    return ResponsesRequest{.chat = std::move(std::get<openai::ChatCompletionRequest>(chat)),
                            .echo = echo_of(body)};
  } catch (const openai::BadRequest& bad) {
    return bad.error;
  } catch (const std::exception& e) {  // JSON library errors: not expected, never a crash
    return openai::invalid_request(str_cat("Invalid request body: ", e.what()));
  }
}

}  // namespace strata::responses
