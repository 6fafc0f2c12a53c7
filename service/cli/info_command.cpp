// strata info MODEL.gguf [--json]: what a model is, without loading weights.
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "model/gguf/gguf_file.h"
#include "model/model_summary.h"
#include "service/cli/commands.h"

namespace strata {
namespace {

struct InfoOptions {
  std::string model_path;
  bool json = false;
};

nlohmann::ordered_json summary_json(const ModelSummary& s) {
  const ModelConfig& c = s.config;
  nlohmann::ordered_json out;
  out["arch"] = s.arch;
  out["name"] = s.name;
  out["params"] = s.n_params;
  out["context_length"] = c.context_length;
  out["n_embd"] = c.n_embd;
  out["n_layers"] = c.n_layers;
  out["n_heads"] = c.n_heads;
  out["n_kv_heads"] = c.n_kv_heads;
  out["head_dim"] = c.head_dim;
  out["n_ffn"] = c.n_ffn;
  out["vocab_size"] = s.vocab_size;
  out["tokenizer"] = s.tokenizer;
  out["chat_template_bytes"] = s.chat_template_bytes;
  out["tool_call_syntax"] = s.tool_call_syntax;
  out["reasoning_syntax"] = s.reasoning_syntax;
  out["kv_bytes_per_token"] = c.kv_bytes_per_token();
  out["tensor_types"] = s.tensor_types;
  out["weight_bytes"] = s.n_weight_bytes;
  out["gguf_version"] = s.gguf_version;
  return out;
}

void print_text(const ModelSummary& s, std::ostream& out) {
  const ModelConfig& c = s.config;
  out << "architecture     " << s.arch << (s.name.empty() ? "" : "  (" + s.name + ")") << "\n"
      << "parameters       " << s.n_params << "  (" << s.n_weight_bytes / (1024.0 * 1024.0)
      << " MiB of weights)\n"
      << "weight types    ";
  for (const auto& [type, count] : s.tensor_types) out << " " << type << " x" << count;
  out << "\n"
      << "context length   " << c.context_length << "\n"
      << "layers           " << c.n_layers << "\n"
      << "heads            " << c.n_heads << " (kv " << c.n_kv_heads << ", head dim "
      << c.head_dim << ")\n"
      << "hidden / ffn     " << c.n_embd << " / " << c.n_ffn << "\n"
      << "tokenizer        " << s.tokenizer << ", vocab " << s.vocab_size << "\n"
      << "chat template    "
      << (s.chat_template_bytes > 0 ? std::to_string(s.chat_template_bytes) + " bytes"
                                    : std::string("none (ChatML assumed)"))
      << ", tool calls " << s.tool_call_syntax << ", reasoning " << s.reasoning_syntax << "\n"
      << "KV bytes/token   " << c.kv_bytes_per_token() << " (fp16)\n";
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Describe a GGUF model (architecture, shape, types)");
  cmd->add_option("model", options->model_path, "GGUF model file")->required();
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->callback([options] {
    GgufFile file = GgufFile::open(options->model_path);
    ModelSummary summary = summarize_model(file);
    if (options->json) {
      std::cout << summary_json(summary).dump(2) << "\n";
    } else {
      print_text(summary, std::cout);
    }
  });
}

}  // namespace strata
