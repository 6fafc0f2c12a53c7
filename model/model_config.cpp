#include "model/model_config.h"

#include "common/str_cat.h"
#include "model/gguf/gguf_file.h"

namespace strata {
namespace {

int64_t require_positive(const GgufFile& file, const std::string& key) {
  std::optional<int64_t> value = file.find_int(key);
  if (!value) throw ModelError(str_cat("model metadata lacks integer key '", key, "'"));
  if (*value <= 0 || *value > (int64_t{1} << 40)) {
    throw ModelError(str_cat("model metadata key '", key, "' is ", *value,
                             ", expected a positive count"));
  }
  return *value;
}

int64_t optional_positive(const GgufFile& file, const std::string& key, int64_t fallback) {
  return file.find(key) ? require_positive(file, key) : fallback;
}

// Every count is at most 2^40; a product of two that sizes a tensor (heads x
// head_dim) is held to the same bound, so that the sizes computed from the
// configuration fit in int64.
void require_product_fits(int64_t a, int64_t b, const std::string& what) {
  if (a > (int64_t{1} << 40) / b) {
    throw ModelError(str_cat(what, " is ", a, " x ", b, ", more than any model holds"));
  }
}

// Vocabulary size: the embedding's row count is the truth the weights encode.
int64_t read_vocab_size(const GgufFile& file, int64_t n_embd) {
  const GgufTensorInfo* embd = file.find_tensor("token_embd.weight");
  if (embd == nullptr) throw ModelError("model has no tensor 'token_embd.weight'");
  if (embd->dims.size() != 2 || static_cast<int64_t>(embd->dims[0]) != n_embd) {
    throw ModelError(str_cat("tensor 'token_embd.weight' should be [", n_embd, ", n_vocab]"));
  }
  return static_cast<int64_t>(embd->dims[1]);
}

}  // namespace

std::string_view architecture_name(Architecture arch) {
  switch (arch) {
    case Architecture::kLlama: return "llama";
    case Architecture::kQwen2: return "qwen2";
    case Architecture::kQwen3: return "qwen3";
  }
  return "?";
}

Architecture parse_architecture(std::string_view name) {
  for (Architecture arch : {Architecture::kLlama, Architecture::kQwen2, Architecture::kQwen3}) {
    if (architecture_name(arch) == name) return arch;
  }
  throw ModelError(str_cat("unsupported architecture '", name,
                           "' (Strata runs llama, qwen2 and qwen3)"));
}

ModelConfig read_model_config(const GgufFile& file) {
  const std::string* arch_name = file.find_string("general.architecture");
  if (arch_name == nullptr) throw ModelError("model metadata lacks 'general.architecture'");
  ModelConfig config;
  config.arch = parse_architecture(*arch_name);
  const std::string p = *arch_name + ".";

  config.context_length = require_positive(file, p + "context_length");
  config.n_embd = require_positive(file, p + "embedding_length");
  config.n_layers = require_positive(file, p + "block_count");
  config.n_ffn = require_positive(file, p + "feed_forward_length");
  config.n_heads = require_positive(file, p + "attention.head_count");
  config.n_kv_heads = optional_positive(file, p + "attention.head_count_kv", config.n_heads);
  config.head_dim = optional_positive(file, p + "attention.key_length",
                                      config.n_embd / config.n_heads);
  if (config.head_dim < 1) {  // no key_length, and more heads than embedding dimensions
    throw ModelError(str_cat("attention.head_count (", config.n_heads,
                             ") is larger than embedding_length (", config.n_embd,
                             "): the head dimension would be 0"));
  }
  if (optional_positive(file, p + "attention.value_length", config.head_dim) != config.head_dim) {
    throw ModelError("attention.value_length differs from key_length; Strata needs them equal");
  }
  if (config.n_heads % config.n_kv_heads != 0) {
    throw ModelError(str_cat("attention.head_count (", config.n_heads,
                             ") is not a multiple of head_count_kv (", config.n_kv_heads, ")"));
  }
  if (config.head_dim % 2 != 0) {
    throw ModelError(str_cat("head dimension ", config.head_dim, " is odd; RoPE needs pairs"));
  }
  require_product_fits(config.n_heads, config.head_dim, "attention.head_count x key_length");
  if (std::optional<double> eps = file.find_float(p + "attention.layer_norm_rms_epsilon")) {
    config.rms_norm_eps = static_cast<float>(*eps);
  }
  if (std::optional<double> base = file.find_float(p + "rope.freq_base")) {
    config.rope_freq_base = static_cast<float>(*base);
  }
  config.rope_ordering =
      config.arch == Architecture::kLlama ? RopeOrdering::kNormal : RopeOrdering::kNeox;
  config.has_rope_freqs = file.find_tensor("rope_freqs.weight") != nullptr;
  config.tied_output = file.find_tensor("output.weight") == nullptr;
  config.n_vocab = read_vocab_size(file, config.n_embd);
  return config;
}

}  // namespace strata
