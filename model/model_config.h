// ModelConfig: a model's hyperparameters, read from GGUF metadata with
// llama.cpp's key names ("{arch}.embedding_length", ...). Validated once when
// the model is opened; everything after can trust it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace strata {

class GgufFile;

// A model file Strata cannot use; the message says why and what to do.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Architecture {
  kLlama,  // Llama 2/3, Mistral, SmolLM, TinyLlama
  kQwen2,  // + bias on Q, K, V
  kQwen3,  // + per-head RMSNorm on Q and K
};

std::string_view architecture_name(Architecture arch);  // "llama", "qwen2", "qwen3"
// nullopt-like: throws ModelError listing the supported names.
Architecture parse_architecture(std::string_view name);

enum class RopeOrdering {
  kNormal,  // rotate pairs (2i, 2i+1): llama
  kNeox,    // rotate pairs (i, i + head_dim/2): qwen2, qwen3
};

struct ModelConfig {
  Architecture arch = Architecture::kLlama;
  int64_t context_length = 0;  // tokens the model was trained for
  int64_t n_embd = 0;          // hidden size
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;  // < n_heads for grouped-query attention
  int64_t head_dim = 0;    // usually n_embd / n_heads; qwen3 sets it explicitly
  int64_t n_ffn = 0;       // SwiGLU inner size
  int64_t n_vocab = 0;
  float rms_norm_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  RopeOrdering rope_ordering = RopeOrdering::kNormal;
  bool has_rope_freqs = false;  // rope_freqs.weight: per-dimension factors (Llama 3 scaling)
  bool tied_output = false;     // no output.weight: the head reuses token_embd.weight

  // Bytes of K and V for one token over all layers, at `bytes_per_elem` (2 for fp16).
  int64_t kv_bytes_per_token(int64_t bytes_per_elem = 2) const {
    return n_layers * 2 * n_kv_heads * head_dim * bytes_per_elem;
  }
};

// Reads and validates the hyperparameters; throws ModelError naming the
// missing or inconsistent key.
ModelConfig read_model_config(const GgufFile& file);

}  // namespace strata
