#include "service/openai/chat_completion_request.h"

#include <exception>

#include "common/str_cat.h"
#include "service/openai/chat_messages.h"
#include "service/openai/json_fields.h"

namespace strata::openai {
namespace {

// chat_template_kwargs, with reasoning_effort added where the kwargs do not set it.
Json read_template_kwargs(const Json& body) {
  Json kwargs = Json::object();
  if (const Json* given = find_field(body, "chat_template_kwargs")) {
    if (!given->is_object()) {
      throw_bad_request("chat_template_kwargs must be an object", "chat_template_kwargs");
    }
    kwargs = *given;
  }
  if (auto effort = read_string(find_field(body, "reasoning_effort"), "reasoning_effort")) {
    if (*effort != "minimal" && *effort != "low" && *effort != "medium" && *effort != "high") {
      throw_bad_request(str_cat("Invalid reasoning_effort '", *effort,
                                "': expected 'minimal', 'low', 'medium' or 'high'"),
                        "reasoning_effort");
    }
    if (!kwargs.contains("reasoning_effort")) kwargs["reasoning_effort"] = *effort;
  }
  return kwargs;
}

// What only constrained decoding can promise is refused rather than silently not kept:
// JSON replies (response_format) and forced tool calls (tool_choice required or named).
void refuse_unconstrained(const Json& body, const ChatTools& tools) {
  if (const Json* format = find_field(body, "response_format")) {
    const std::string type =
        format->is_object()
            ? read_string(find_field(*format, "type"), "response_format.type").value_or("")
            : "";
    if (type != "text") {
      throw_bad_request(str_cat("response_format '", type, "' is not supported yet: replies "
                                "are not constrained to JSON. Leave response_format out (or "
                                "{\"type\": \"text\"}) and ask for JSON in the prompt."),
                        "response_format.type");
    }
  }
  if (tools.choice.mode == ToolChoiceMode::kRequired ||
      tools.choice.mode == ToolChoiceMode::kFunction) {
    throw_bad_request("tool_choice 'required' or a named function is not supported yet: a "
                      "call cannot be forced. Use 'auto' (the default) or 'none'.",
                      "tool_choice");
  }
}

}  // namespace

std::variant<ChatCompletionRequest, ApiError> parse_chat_completion_request(
    const Json& body) {
  try {
    if (!body.is_object()) return invalid_request("The request body must be a JSON object.");
    ChatCompletionRequest request;
    request.messages = read_chat_messages(find_field(body, "messages"));
    request.tools = read_chat_tools(body);
    refuse_unconstrained(body, request.tools);
    request.template_kwargs = read_template_kwargs(body);
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
  } catch (const std::exception& e) {  // JSON library errors: not expected, never a crash
    return invalid_request(str_cat("Invalid request body: ", e.what()));
  }
}

}  // namespace strata::openai
