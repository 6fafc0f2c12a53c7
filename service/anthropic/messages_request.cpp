#include "service/anthropic/messages_request.h"

#include <exception>
#include <string>

#include "common/str_cat.h"

namespace strata::anthropic {
namespace {

using openai::BadRequest;
using openai::find_field;
using openai::Json;
using openai::read_string;
using openai::throw_bad_request;

std::string block_type(const Json& block, const std::string& param) {
  if (!block.is_object()) throw_bad_request(param + " must be an object", param);
  auto type = read_string(find_field(block, "type"), param + ".type");
  if (!type) throw_bad_request(param + ".type is required", param + ".type");
  return *type;
}

std::string required_string(const Json& object, const char* key, const std::string& param) {
  auto value = read_string(find_field(object, key), param + "." + key);
  if (!value) throw_bad_request(str_cat(param, ".", key, " is required"), param + "." + key);
  return *value;
}

[[noreturn]] void unsupported_block(const std::string& type, const std::string& param) {
  throw_bad_request(str_cat("Content blocks of type '", type, "' are not supported here"),
                    param + ".type");
}

// A string, or text blocks joined with "\n" (system prompts and tool results).
std::string read_text(const Json& content, const std::string& param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw_bad_request(param + " must be a string or an array", param);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string block_param = str_cat(param, ".[", i, "]");
    const std::string type = block_type(content[i], block_param);
    if (type != "text") unsupported_block(type, block_param);
    if (i > 0) text += '\n';
    text += required_string(content[i], "text", block_param);
  }
  return text;
}

// Appends the chat messages of one user turn: its tool results, then its text.
void add_user_turn(const Json& content, const std::string& param, Json& out) {
  if (content.is_string()) {
    out.push_back({{"role", "user"}, {"content", content}});
    return;
  }
  if (!content.is_array()) throw_bad_request(param + " must be a string or an array", param);
  std::string text;
  bool has_text = false;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& block = content[i];
    const std::string block_param = str_cat(param, ".[", i, "]");
    const std::string type = block_type(block, block_param);
    if (type == "text") {
      if (has_text) text += '\n';
      text += required_string(block, "text", block_param);
      has_text = true;
    } else if (type == "tool_result") {
      const Json* result = find_field(block, "content");
      out.push_back({{"role", "tool"},
                     {"tool_call_id", required_string(block, "tool_use_id", block_param)},
                     {"content", result ? read_text(*result, block_param + ".content") : ""}});
    } else {
      unsupported_block(type, block_param);
    }
  }
  if (has_text) out.push_back({{"role", "user"}, {"content", text}});
}

void add_assistant_turn(const Json& content, const std::string& param, Json& out) {
  if (content.is_string()) {
    out.push_back({{"role", "assistant"}, {"content", content}});
    return;
  }
  if (!content.is_array()) throw_bad_request(param + " must be a string or an array", param);
  Json message = {{"role", "assistant"}, {"content", ""}};
  std::string text;
  std::string reasoning;
  Json calls = Json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& block = content[i];
    const std::string block_param = str_cat(param, ".[", i, "]");
    const std::string type = block_type(block, block_param);
    if (type == "text") {
      text += required_string(block, "text", block_param);
    } else if (type == "thinking") {
      reasoning += required_string(block, "thinking", block_param);
    } else if (type == "redacted_thinking") {
      continue;  // opaque to any model but the one that wrote it
    } else if (type == "tool_use") {
      const Json* input = find_field(block, "input");
      if (input != nullptr && !input->is_object()) {
        throw_bad_request(block_param + ".input must be an object", block_param + ".input");
      }
      calls.push_back({{"id", required_string(block, "id", block_param)},
                       {"type", "function"},
                       {"function",
                        {{"name", required_string(block, "name", block_param)},
                         {"arguments", input ? *input : Json::object()}}}});
    } else {
      unsupported_block(type, block_param);
    }
  }
  message["content"] = text;
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  out.push_back(std::move(message));
}

Json translate_messages(const Json& body) {
  const Json* messages = find_field(body, "messages");
  if (messages == nullptr) throw_bad_request("messages is required", "messages");
  if (!messages->is_array() || messages->empty()) {
    throw_bad_request("messages must be a non-empty array", "messages");
  }
  Json out = Json::array();
  if (const Json* system = find_field(body, "system")) {
    out.push_back({{"role", "system"}, {"content", read_text(*system, "system")}});
  }
  for (size_t i = 0; i < messages->size(); ++i) {
    const Json& message = (*messages)[i];
    const std::string param = str_cat("messages.[", i, "]");
    if (!message.is_object()) throw_bad_request(param + " must be an object", param);
    const std::string role = required_string(message, "role", param);
    const Json* content = find_field(message, "content");
    if (content == nullptr) throw_bad_request(param + ".content is required", param + ".content");
    if (role == "user") {
      add_user_turn(*content, param + ".content", out);
    } else if (role == "assistant") {
      add_assistant_turn(*content, param + ".content", out);
    } else {
      throw_bad_request(str_cat("Invalid role '", role, "': expected 'user' or 'assistant'"),
                        param + ".role");
    }
  }
  return out;
}

Json translate_tools(const Json& tools) {
  if (!tools.is_array()) throw_bad_request("tools must be an array", "tools");
  Json out = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& tool = tools[i];
    const std::string param = str_cat("tools.[", i, "]");
    if (!tool.is_object()) throw_bad_request(param + " must be an object", param);
    auto type = read_string(find_field(tool, "type"), param + ".type");
    if (type && *type != "custom") {
      throw_bad_request(str_cat("Tools of type '", *type, "' are not supported: give client "
                                "tools with a name and an input_schema"),
                        param + ".type");
    }
    Json function = {{"name", required_string(tool, "name", param)}};
    if (auto description = read_string(find_field(tool, "description"), param + ".description")) {
      function["description"] = *description;
    }
    const Json* schema = find_field(tool, "input_schema");
    if (schema == nullptr || !schema->is_object()) {
      throw_bad_request(param + ".input_schema is required (a JSON schema object)",
                        param + ".input_schema");
    }
    function["parameters"] = *schema;
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// tool_choice and disable_parallel_tool_use, into `chat`.
void translate_tool_choice(const Json& choice, Json& chat) {
  if (!choice.is_object()) throw_bad_request("tool_choice must be an object", "tool_choice");
  const std::string type = required_string(choice, "type", "tool_choice");
  if (type == "auto") {
    chat["tool_choice"] = "auto";
  } else if (type == "any") {
    chat["tool_choice"] = "required";
  } else if (type == "none") {
    chat["tool_choice"] = "none";
  } else if (type == "tool") {
    chat["tool_choice"] = {{"type", "function"},
                           {"function", {{"name", required_string(choice, "name", "tool_choice")}}}};
  } else {
    throw_bad_request(str_cat("Invalid tool_choice type '", type,
                              "': expected 'auto', 'any', 'tool' or 'none'"),
                      "tool_choice.type");
  }
  if (auto no_parallel = openai::read_bool(find_field(choice, "disable_parallel_tool_use"),
                                           "tool_choice.disable_parallel_tool_use")) {
    chat["parallel_tool_calls"] = !*no_parallel;
  }
}

void translate_thinking(const Json& thinking, Json& chat) {
  if (!thinking.is_object()) throw_bad_request("thinking must be an object", "thinking");
  const std::string type = required_string(thinking, "type", "thinking");
  if (type != "enabled" && type != "disabled") {
    throw_bad_request(str_cat("Invalid thinking type '", type, "': expected 'enabled' or "
                              "'disabled'"),
                      "thinking.type");
  }
  chat["chat_template_kwargs"] = {{"enable_thinking", type == "enabled"}};
}

// The OpenAI chat body that asks for what `body` asks for.
Json translate(const Json& body, MessagesEndpoint endpoint) {
  Json chat = Json::object();
  if (const Json* model = find_field(body, "model")) chat["model"] = *model;
  chat["messages"] = translate_messages(body);
  const Json* max_tokens = find_field(body, "max_tokens");
  if (max_tokens == nullptr && endpoint == MessagesEndpoint::kCreate) {
    throw_bad_request("max_tokens is required", "max_tokens");
  }
  if (max_tokens != nullptr) chat["max_tokens"] = *max_tokens;
  if (auto temperature = openai::read_number(find_field(body, "temperature"), "temperature")) {
    // Anthropic's range, narrower than OpenAI's.
    if (!(*temperature >= 0.0 && *temperature <= 1.0)) {
      throw_bad_request(str_cat("temperature must be between 0 and 1, got ", *temperature),
                        "temperature");
    }
    chat["temperature"] = *temperature;
  }
  for (const char* key : {"top_p", "top_k", "stream"}) {
    if (const Json* value = find_field(body, key)) chat[key] = *value;
  }
  if (const Json* stop = find_field(body, "stop_sequences")) chat["stop"] = *stop;
  if (const Json* tools = find_field(body, "tools")) chat["tools"] = translate_tools(*tools);
  if (const Json* choice = find_field(body, "tool_choice")) translate_tool_choice(*choice, chat);
  if (const Json* thinking = find_field(body, "thinking")) translate_thinking(*thinking, chat);
  // Anthropic's final message_delta carries the usage, so the stream always needs it.
  if (chat.value("stream", false)) chat["stream_options"] = {{"include_usage", true}};
  return chat;
}

}  // namespace

std::variant<openai::ChatCompletionRequest, openai::ApiError> parse_messages_request(
    const Json& body, MessagesEndpoint endpoint) {
  try {
    if (!body.is_object()) return openai::invalid_request("The request body must be a JSON object.");
    return openai::parse_chat_completion_request(translate(body, endpoint));
  } catch (const BadRequest& bad) {
    return bad.error;
  } catch (const std::exception& e) {  // JSON library errors: not expected, never a crash
    return openai::invalid_request(str_cat("Invalid request body: ", e.what()));
  }
}

}  // namespace strata::anthropic
