// strata dev render-chat MODEL.gguf --messages M.json [--tools T.json] [--kwargs K.json]
//     [--no-generation-prompt] [--template FILE.jinja]
// Prints the prompt text the server would tokenize for a chat request: the request is
// read by the server's own parser (service/openai/) and rendered by the model's chat
// template, or by FILE.jinja with the model's BOS/EOS tokens. Only that text goes to
// standard output, with no line break added, so that it can be compared byte for byte.
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>

#include "common/str_cat.h"
#include "model/loaded_model.h"
#include "service/cli/commands.h"
#include "service/config/config_file.h"
#include "service/config/setting_values.h"
#include "service/openai/chat_completion_request.h"
#include "service/openai/chat_prompt.h"

namespace strata {
namespace {

struct RenderChatOptions {
  std::string model_path;
  std::string messages_path;  // the messages array, or a whole request body
  std::string tools_path;     // "": the body's tools, if any
  std::string kwargs_path;    // "": the body's chat_template_kwargs, if any
  std::string template_path;  // "": the model's chat template
  bool no_generation_prompt = false;
};

openai::Json read_json_file(const std::string& path, const std::string& option) {
  std::optional<std::string> text = read_text_file(path);
  if (!text) throw std::runtime_error(str_cat(option, " ", path, ": no such file"));
  try {
    return openai::Json::parse(*text);
  } catch (const openai::Json::parse_error& e) {
    throw std::runtime_error(str_cat(option, " ", path, ": not JSON: ", e.what()));
  }
}

// The chat completion request the files describe: --messages is the request body or its
// messages array; --tools and --kwargs replace the body's tools and chat_template_kwargs.
openai::Json request_body(const RenderChatOptions& o) {
  openai::Json messages = read_json_file(o.messages_path, "--messages");
  openai::Json body =
      messages.is_array() ? openai::Json{{"messages", std::move(messages)}} : std::move(messages);
  if (!body.is_object()) {
    throw std::runtime_error(
        str_cat("--messages ", o.messages_path, ": expected a messages array or a request object"));
  }
  if (!o.tools_path.empty()) body["tools"] = read_json_file(o.tools_path, "--tools");
  if (!o.kwargs_path.empty()) {
    body["chat_template_kwargs"] = read_json_file(o.kwargs_path, "--kwargs");
  }
  return body;
}

openai::ChatCompletionRequest parse_request(const openai::Json& body) {
  auto parsed = openai::parse_chat_completion_request(body);
  if (const auto* error = std::get_if<openai::ApiError>(&parsed)) {
    // The message names the field where it can ("tools.[0].function is required").
    const bool named = !error->param || error->message.find(*error->param) != std::string::npos;
    throw std::runtime_error(named ? error->message : str_cat(*error->param, ": ", error->message));
  }
  return std::get<openai::ChatCompletionRequest>(std::move(parsed));
}

void render_chat(const RenderChatOptions& o) {
  // Files first: a mistyped path is reported before a large model is mapped.
  const openai::ChatCompletionRequest request = parse_request(request_body(o));
  std::optional<std::string> chosen_template;
  if (!o.template_path.empty()) chosen_template = read_chat_template_file(o.template_path);

  const std::unique_ptr<LoadedModel> model = LoadedModel::open(o.model_path, chosen_template);
  ChatTemplateInput input = openai::chat_template_input(request);
  input.add_generation_prompt = !o.no_generation_prompt;
  const std::string text = model->chat_template().render(input);
  std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cout.flush();
}

}  // namespace

void add_render_chat_command(CLI::App& dev) {
  auto o = std::make_shared<RenderChatOptions>();
  CLI::App* cmd = dev.add_subcommand(
      "render-chat", "Print the prompt text the server would tokenize for a chat request");
  cmd->add_option("model", o->model_path, "GGUF model file")->required();
  cmd->add_option("--messages", o->messages_path,
                  "JSON file: the request's messages array, or a whole request body")
      ->required();
  cmd->add_option("--tools", o->tools_path, "JSON file: the request's tools array");
  cmd->add_option("--kwargs", o->kwargs_path,
                  "JSON file: chat_template_kwargs, e.g. {\"enable_thinking\": false}");
  cmd->add_flag("--no-generation-prompt", o->no_generation_prompt,
                "Leave out the assistant header that prompts a reply");
  cmd->add_option("--template", o->template_path,
                  "Jinja chat template file to use instead of the model's");
  cmd->callback([o] { render_chat(*o); });
}

}  // namespace strata
