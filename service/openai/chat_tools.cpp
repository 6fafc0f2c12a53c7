#include "service/openai/chat_tools.h"

#include <set>

#include "common/str_cat.h"

namespace strata::openai {
namespace {

// The tool's function name, after checking the tool's shape.
std::string check_tool(const Json& tool, const std::string& param) {
  if (!tool.is_object()) throw_bad_request(param + " must be an object", param);
  std::string type = read_string(find_field(tool, "type"), param + ".type").value_or("");
  if (type != "function") {
    throw_bad_request(str_cat("Unsupported tool type '", type, "': only 'function' tools are "
                              "supported"),
                      param + ".type");
  }
  const std::string function_param = param + ".function";
  const Json* function = find_field(tool, "function");
  if (function == nullptr) throw_bad_request(function_param + " is required", function_param);
  if (!function->is_object()) throw_bad_request(function_param + " must be an object", function_param);
  auto name = read_string(find_field(*function, "name"), function_param + ".name");
  if (!name || name->empty()) {
    throw_bad_request(function_param + ".name is required", function_param + ".name");
  }
  read_string(find_field(*function, "description"), function_param + ".description");
  read_bool(find_field(*function, "strict"), function_param + ".strict");
  if (const Json* parameters = find_field(*function, "parameters");
      parameters != nullptr && !parameters->is_object()) {
    throw_bad_request(function_param + ".parameters must be a JSON schema object",
                      function_param + ".parameters");
  }
  return *name;
}

ToolChoice read_tool_choice(const Json* value, const std::set<std::string>& names) {
  ToolChoice choice;
  if (value == nullptr) return choice;
  if (value->is_string()) {
    const std::string mode = value->get<std::string>();
    if (mode == "auto") return choice;
    if (mode == "none") return {.mode = ToolChoiceMode::kNone};
    if (mode == "required") {
      if (names.empty()) {
        throw_bad_request("tool_choice 'required' needs at least one tool in tools",
                          "tool_choice");
      }
      return {.mode = ToolChoiceMode::kRequired};
    }
    throw_bad_request(str_cat("Invalid tool_choice '", mode,
                              "': expected 'auto', 'none', 'required' or a function"),
                      "tool_choice");
  }
  if (!value->is_object()) {
    throw_bad_request("tool_choice must be a string or an object", "tool_choice");
  }
  const Json* function = find_field(*value, "function");
  auto name = function != nullptr && function->is_object()
                  ? read_string(find_field(*function, "name"), "tool_choice.function.name")
                  : std::nullopt;
  if (!name) {
    throw_bad_request("tool_choice.function.name is required", "tool_choice.function.name");
  }
  if (!names.contains(*name)) {
    throw_bad_request(str_cat("tool_choice names the function '", *name,
                              "', which is not among the tools"),
                      "tool_choice.function.name");
  }
  return {.mode = ToolChoiceMode::kFunction, .function = *name};
}

ParameterType parameter_type(const Json& schema) {
  const Json* type = schema.is_object() ? find_field(schema, "type") : nullptr;
  if (type == nullptr || !type->is_string()) return ParameterType::kUnknown;
  const std::string name = type->get<std::string>();
  if (name == "string") return ParameterType::kString;
  if (name == "integer") return ParameterType::kInteger;
  if (name == "number") return ParameterType::kNumber;
  if (name == "boolean") return ParameterType::kBoolean;
  if (name == "object") return ParameterType::kObject;
  if (name == "array") return ParameterType::kArray;
  if (name == "null") return ParameterType::kNull;
  return ParameterType::kUnknown;
}

}  // namespace

std::vector<ToolSignature> tool_signatures(const Json& tools) {
  std::vector<ToolSignature> out;
  for (const Json& tool : tools) {
    const Json& function = tool.at("function");
    ToolSignature signature{.name = function.at("name").get<std::string>(), .parameters = {}};
    const Json* parameters = find_field(function, "parameters");
    const Json* properties = parameters ? find_field(*parameters, "properties") : nullptr;
    if (properties != nullptr && properties->is_object()) {
      for (const auto& [name, schema] : properties->items()) {
        signature.parameters.emplace(name, parameter_type(schema));
      }
    }
    out.push_back(std::move(signature));
  }
  return out;
}

ChatTools read_chat_tools(const Json& body) {
  ChatTools out;
  std::set<std::string> names;
  if (const Json* tools = find_field(body, "tools")) {
    if (!tools->is_array()) throw_bad_request("tools must be an array", "tools");
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string param = str_cat("tools.[", i, "]");
      std::string name = check_tool((*tools)[i], param);
      if (!names.insert(name).second) {
        throw_bad_request(str_cat("Two tools are named '", name, "'"), param + ".function.name");
      }
    }
    out.tools = *tools;
  }
  out.choice = read_tool_choice(find_field(body, "tool_choice"), names);
  out.parallel_calls =
      read_bool(find_field(body, "parallel_tool_calls"), "parallel_tool_calls").value_or(true);
  return out;
}

}  // namespace strata::openai
