#include "service/openai/chat_messages.h"

#include <string>

#include "common/str_cat.h"

namespace strata::openai {
namespace {

// A string, or an array of text parts joined with "\n".
std::string read_content(const Json& content, const std::string& param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw_bad_request(param + " must be a string or an array of content parts", param);
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    std::string part_param = str_cat(param, ".[", i, "]");
    if (!part.is_object()) throw_bad_request(part_param + " must be an object", part_param);
    std::string type = read_string(find_field(part, "type"), part_param + ".type").value_or("");
    if (type != "text") {
      throw_bad_request(str_cat("Unsupported content part type '", type,
                                "': only 'text' parts are supported"),
                        part_param + ".type");
    }
    auto part_text = read_string(find_field(part, "text"), part_param + ".text");
    if (!part_text) throw_bad_request(part_param + ".text is required", part_param + ".text");
    if (i > 0) text += '\n';
    text += *part_text;
  }
  return text;
}

// {"name": ..., "arguments": object or string}, arguments decoded where they are an object.
Json read_call_function(const Json* function, const std::string& param) {
  if (function == nullptr) throw_bad_request(param + " is required", param);
  if (!function->is_object()) throw_bad_request(param + " must be an object", param);
  auto name = read_string(find_field(*function, "name"), param + ".name");
  if (!name || name->empty()) {
    throw_bad_request(param + ".name is required", param + ".name");
  }
  Json out = Json::object();
  out["name"] = *name;
  const Json* arguments = find_field(*function, "arguments");
  if (arguments == nullptr) {
    out["arguments"] = Json::object();
  } else if (arguments->is_string()) {
    Json decoded = Json::parse(arguments->get<std::string>(), nullptr, false);
    out["arguments"] = decoded.is_object() ? std::move(decoded) : *arguments;
  } else if (arguments->is_object()) {
    out["arguments"] = *arguments;
  } else {
    throw_bad_request(param + ".arguments must be a string or an object", param + ".arguments");
  }
  return out;
}

Json read_tool_calls(const Json& calls, const std::string& param) {
  if (!calls.is_array()) throw_bad_request(param + " must be an array", param);
  Json out = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    const Json& call = calls[i];
    std::string call_param = str_cat(param, ".[", i, "]");
    if (!call.is_object()) throw_bad_request(call_param + " must be an object", call_param);
    std::string type =
        read_string(find_field(call, "type"), call_param + ".type").value_or("function");
    if (type != "function") {
      throw_bad_request(str_cat("Unsupported tool call type '", type, "': expected 'function'"),
                        call_param + ".type");
    }
    Json item = Json::object();
    if (auto id = read_string(find_field(call, "id"), call_param + ".id")) item["id"] = *id;
    item["type"] = "function";
    item["function"] = read_call_function(find_field(call, "function"), call_param + ".function");
    out.push_back(std::move(item));
  }
  return out;
}

std::string read_role(const Json& message, const std::string& param) {
  auto role = read_string(find_field(message, "role"), param + ".role");
  if (!role) throw_bad_request(param + ".role is required", param + ".role");
  if (*role == "developer") return "system";
  if (*role != "system" && *role != "user" && *role != "assistant" && *role != "tool") {
    throw_bad_request(str_cat("Invalid role '", *role,
                              "': expected 'system', 'developer', 'user', 'assistant' or 'tool'"),
                      param + ".role");
  }
  return *role;
}

Json read_message(const Json& message, const std::string& param) {
  if (!message.is_object()) throw_bad_request(param + " must be an object", param);
  const std::string role = read_role(message, param);
  Json out = Json::object();
  out["role"] = role;
  const Json* content = find_field(message, "content");
  if (content != nullptr) {
    out["content"] = read_content(*content, param + ".content");
  } else if (role == "assistant") {
    // "", not null: templates test content with `in`, `| trim` or `is string` (Qwen3's
    // fails on None), and every one reads "" as no text.
    out["content"] = "";
  } else {
    throw_bad_request(param + ".content is required", param + ".content");
  }
  if (auto name = read_string(find_field(message, "name"), param + ".name")) out["name"] = *name;
  if (role == "assistant") {
    if (const Json* calls = find_field(message, "tool_calls")) {
      out["tool_calls"] = read_tool_calls(*calls, param + ".tool_calls");
    }
    if (auto reasoning =
            read_string(find_field(message, "reasoning_content"), param + ".reasoning_content")) {
      out["reasoning_content"] = *reasoning;
    }
  }
  if (role == "tool") {
    if (auto id = read_string(find_field(message, "tool_call_id"), param + ".tool_call_id")) {
      out["tool_call_id"] = *id;
    }
  }
  return out;
}

}  // namespace

Json read_chat_messages(const Json* messages) {
  if (messages == nullptr) throw_bad_request("messages is required", "messages");
  if (!messages->is_array()) throw_bad_request("messages must be an array", "messages");
  if (messages->empty()) throw_bad_request("messages must hold at least one message", "messages");
  Json out = Json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    out.push_back(read_message((*messages)[i], str_cat("messages.[", i, "]")));
  }
  return out;
}

}  // namespace strata::openai
