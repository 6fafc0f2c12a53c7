#include "dev/make_model_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <memory>

#include "common/log.h"
#include "common/str_cat.h"
#include "dev/hf_tokenizer_import.h"
#include "dev/random_model.h"
#include "model/gguf/gguf_writer.h"

namespace strata {
namespace {

struct MakeModelOptions {
  std::string arch = "llama";
  std::string tokenizer = "llama2";
  int64_t hidden = 64;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t kv_heads = 2;
  int64_t head_dim = 0;  // 0: hidden / heads
  int64_t ffn = 128;
  int64_t ctx = 2048;
  float rope_theta = 10000.0f;
  std::string rope_scaling = "none";
  float rope_scaling_factor = 8.0f;
  bool tied_output = false;
  std::string chat_template_path;  // replaces the tokenizer's chat template
  std::string type = "f32";
  uint64_t seed = 1;
  std::string output;
};

// "llama3" stays "llama3"; a directory is named by its last components.
std::string tokenizer_label(const std::string& tokenizer) {
  std::filesystem::path path(tokenizer);
  if (!path.has_parent_path()) return tokenizer;
  std::string last = path.filename().string();
  if (last == "models" || last.empty()) last = path.parent_path().filename().string();
  return last;
}

ModelConfig config_from(const MakeModelOptions& o, int64_t n_vocab) {
  if (o.hidden % o.heads != 0 && o.head_dim == 0) {
    throw std::runtime_error(str_cat("--hidden ", o.hidden, " is not a multiple of --heads ",
                                     o.heads, "; give --head-dim"));
  }
  if (o.heads % o.kv_heads != 0) {
    throw std::runtime_error(
        str_cat("--heads ", o.heads, " is not a multiple of --kv-heads ", o.kv_heads));
  }
  ModelConfig c;
  c.arch = parse_architecture(o.arch);
  c.n_embd = o.hidden;
  c.n_layers = o.layers;
  c.n_heads = o.heads;
  c.n_kv_heads = o.kv_heads;
  c.head_dim = o.head_dim > 0 ? o.head_dim : o.hidden / o.heads;
  c.n_ffn = o.ffn;
  c.context_length = o.ctx;
  c.n_vocab = n_vocab;
  c.rms_norm_eps = c.arch == Architecture::kLlama ? 1e-5f : 1e-6f;
  c.rope_freq_base = o.rope_theta;
  c.tied_output = o.tied_output;
  c.has_rope_freqs = o.rope_scaling == "llama3";
  return c;
}

void make_model(const MakeModelOptions& o) {
  std::optional<WeightType> type = parse_weight_type(o.type);
  if (!type || !weight_type_info(*type).supported) {
    throw std::runtime_error(
        str_cat("--type ", o.type, ": expected f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k"));
  }
  GgufWriter writer;
  int64_t n_vocab = 0;
  for (auto& [key, value] : import_hf_tokenizer(resolve_hf_tokenizer_dir(o.tokenizer))) {
    if (key == "tokenizer.ggml.tokens")
      n_vocab = static_cast<int64_t>(value.as_array()->items.size());
    writer.set(key, std::move(value));
  }
  if (!o.chat_template_path.empty()) {
    std::ifstream in(o.chat_template_path);
    if (!in)
      throw std::runtime_error(str_cat("cannot read --chat-template ", o.chat_template_path));
    std::ostringstream text;
    text << in.rdbuf();
    writer.set("tokenizer.chat_template", text.str());
  }
  RandomModelOptions model{
      .config = config_from(o, n_vocab),
      .type = *type,
      .seed = o.seed,
      .name = str_cat("strata-random-", o.arch, "-", tokenizer_label(o.tokenizer)),
      .rope_scaling = std::nullopt};
  if (o.rope_scaling == "llama3") {
    model.rope_scaling = Llama3RopeScaling{.factor = o.rope_scaling_factor};
  } else if (o.rope_scaling != "none") {
    throw std::runtime_error(
        str_cat("--rope-scaling ", o.rope_scaling, ": expected none or llama3"));
  }
  add_random_model(writer, model);
  writer.write(o.output);
  log_info("wrote ", o.output, " (", o.arch, ", ", o.layers, " layers, hidden ", o.hidden,
           ", vocab ", n_vocab, ", ", o.type, ")");
}

}  // namespace

void add_make_model_command(CLI::App& dev) {
  auto o = std::make_shared<MakeModelOptions>();
  CLI::App* cmd = dev.add_subcommand(
      "make-model", "Write a model with seeded random weights and a real tokenizer");
  cmd->add_option("--arch", o->arch, "llama, qwen2 or qwen3")->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "llama2, llama3, qwen3 or a directory")
      ->capture_default_str();
  cmd->add_option("--hidden", o->hidden, "Hidden size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--layers", o->layers, "Layers")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--heads", o->heads, "Attention heads")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--kv-heads", o->kv_heads, "KV heads (GQA)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--head-dim", o->head_dim, "Head dimension (default hidden/heads)");
  cmd->add_option("--ffn", o->ffn, "FFN inner size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--ctx", o->ctx, "Context length")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--rope-theta", o->rope_theta, "RoPE frequency base")->capture_default_str();
  cmd->add_option("--rope-scaling", o->rope_scaling, "none, or llama3 (writes rope_freqs.weight)")
      ->capture_default_str();
  cmd->add_option("--rope-scaling-factor", o->rope_scaling_factor, "Llama 3 scaling factor")
      ->capture_default_str();
  cmd->add_option("--chat-template", o->chat_template_path,
                  "Jinja chat template file to store instead of the tokenizer's");
  cmd->add_flag("--tied-output", o->tied_output, "Reuse token_embd as the output head");
  cmd->add_option("--type", o->type, "f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed")->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Output GGUF path")->required();
  cmd->callback([o] { make_model(*o); });
}

}  // namespace strata
