#include "dev/import_weights_command.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/log.h"
#include "common/str_cat.h"
#include "dev/hf_tokenizer_import.h"
#include "dev/hf_weights_import.h"
#include "dev/safetensors_reader.h"
#include "model/gguf/gguf_writer.h"

namespace strata {
namespace {

// tests/data/chat_templates/chatml.jinja: what `--chat-template chatml` stores.
constexpr char kChatmlTemplate[] =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}";

struct ImportWeightsOptions {
  std::string config_path;     // config.json
  std::string weights_path;    // a .safetensors file or a directory of shards
  std::string tokenizer_dir;   // tokenizer.json + tokenizer_config.json
  std::string chat_template;   // "chatml", a Jinja file, or empty: the tokenizer's
  std::string type = "q8_0";
  std::string name = "strata-import";
  std::string license;         // general.license, when given
  std::string output;
};

std::string chat_template_text(const std::string& option) {
  if (option == "chatml") return kChatmlTemplate;
  std::ifstream in(option);
  if (!in) throw std::runtime_error(str_cat("cannot read --chat-template ", option));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void import_weights(const ImportWeightsOptions& o) {
  std::optional<WeightType> type = parse_weight_type(o.type);
  if (!type || !weight_type_info(*type).supported) {
    throw std::runtime_error(
        str_cat("--type ", o.type, ": expected f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k"));
  }
  const ModelConfig config = read_hf_llama_config(o.config_path);
  const SafetensorsReader weights(o.weights_path);

  GgufWriter writer;
  writer.set("general.name", o.name);
  writer.set("general.type", "model");
  if (!o.license.empty()) writer.set("general.license", o.license);
  int64_t n_tokens = 0;
  for (auto& [key, value] : import_hf_tokenizer(o.tokenizer_dir)) {
    if (key == "tokenizer.ggml.tokens")
      n_tokens = static_cast<int64_t>(value.as_array()->items.size());
    writer.set(key, std::move(value));
  }
  if (n_tokens != config.n_vocab) {
    throw std::runtime_error(str_cat(o.tokenizer_dir, " has ", n_tokens, " tokens but ",
                                     o.config_path, " a vocab_size of ", config.n_vocab));
  }
  if (!o.chat_template.empty())
    writer.set("tokenizer.chat_template", chat_template_text(o.chat_template));
  add_hf_llama_weights(writer, config, weights, *type);
  writer.write(o.output);
  log_info("wrote ", o.output, " (llama, ", config.n_layers, " layers, hidden ", config.n_embd,
           ", vocab ", config.n_vocab, ", ", o.type, ", ",
           std::filesystem::file_size(o.output) / 1024, " KiB)");
}

}  // namespace

void add_import_weights_command(CLI::App& dev) {
  auto o = std::make_shared<ImportWeightsOptions>();
  CLI::App* cmd = dev.add_subcommand(
      "import-weights", "Write a GGUF model from a Hugging Face Llama checkpoint (safetensors)");
  cmd->add_option("--config", o->config_path, "The checkpoint's config.json")->required();
  cmd->add_option("--weights", o->weights_path, "A .safetensors file or a directory of shards")
      ->required();
  cmd->add_option("--tokenizer", o->tokenizer_dir,
                  "Directory holding tokenizer.json and tokenizer_config.json")
      ->required();
  cmd->add_option("--chat-template", o->chat_template,
                  "chatml, or a Jinja file to store instead of the tokenizer's template");
  cmd->add_option("--type", o->type, "f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k")
      ->capture_default_str();
  cmd->add_option("--name", o->name, "general.name")->capture_default_str();
  cmd->add_option("--license", o->license, "general.license");
  cmd->add_option("-o,--output", o->output, "Output GGUF path")->required();
  cmd->callback([o] { import_weights(*o); });
}

}  // namespace strata
