#include "service/openai/chat_completion_request.h"

#include <exception>

#include "common/str_cat.h"
#include "service/openai/json_fields.h"

namespace strata::openai {
namespace {

// A string, or an array of text parts joined with "\n" (as vLLM joins them).
std::string read_content(const nlohmann::json& content, const std::string& param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw_bad_request(param + " must be a string or an array of content parts", param);
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const nlohmann::json& part = content[i];
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

std::vector<ChatMessage> read_messages(const nlohmann::json* messages) {
  if (messages == nullptr) throw_bad_request("messages is required", "messages");
  if (!messages->is_array()) throw_bad_request("messages must be an array", "messages");
  if (messages->empty()) throw_bad_request("messages must hold at least one message", "messages");
  std::vector<ChatMessage> out;
  out.reserve(messages->size());
  for (size_t i = 0; i < messages->size(); ++i) {
    const nlohmann::json& message = (*messages)[i];
    std::string param = str_cat("messages.[", i, "]");
    if (!message.is_object()) throw_bad_request(param + " must be an object", param);
    auto role = read_string(find_field(message, "role"), param + ".role");
    if (!role) throw_bad_request(param + ".role is required", param + ".role");
    if (*role == "developer") role = "system";
    if (*role != "system" && *role != "user" && *role != "assistant") {
      throw_bad_request(str_cat("Invalid role '", *role,
                                "': expected 'system', 'developer', 'user' or 'assistant'"),
                        param + ".role");
    }
    const nlohmann::json* content = find_field(message, "content");
    std::string text;
    if (content != nullptr) {
      text = read_content(*content, param + ".content");
    } else if (*role != "assistant") {
      throw_bad_request(param + ".content is required", param + ".content");
    }
    out.push_back(ChatMessage{.role = std::move(*role), .content = std::move(text)});
  }
  return out;
}

}  // namespace

std::variant<ChatCompletionRequest, ApiError> parse_chat_completion_request(
    const nlohmann::json& body) {
  try {
    if (!body.is_object()) return invalid_request("The request body must be a JSON object.");
    ChatCompletionRequest request;
    request.messages = read_messages(find_field(body, "messages"));
    request.options = read_generation_options(body);
    GenerationOptions& options = request.options;
    options.logprobs = read_bool(find_field(body, "logprobs"), "logprobs").value_or(false);
    if (auto top = read_integer(find_field(body, "top_logprobs"), "top_logprobs")) {
      if (*top < 0 || *top > SamplingParams::kMaxLogprobs) {
        throw_bad_request(str_cat("top_logprobs must be in [0, ", SamplingParams::kMaxLogprobs,
                                  "], got ", *top),
                          "top_logprobs");
      }
      if (!options.logprobs && *top > 0) {
        throw_bad_request("top_logprobs requires logprobs to be true", "top_logprobs");
      }
      options.sampling.n_logprobs = static_cast<int32_t>(*top);
    }
    validate_sampling(options);
    return request;
  } catch (const BadRequest& bad) {
    return bad.error;
  } catch (const std::exception& e) {  // nlohmann::json errors: not expected, never a crash
    return invalid_request(str_cat("Invalid request body: ", e.what()));
  }
}

}  // namespace strata::openai
