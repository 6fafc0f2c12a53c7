// ModelWeights: every tensor of a loaded model bound by role, validated once
// against the architecture's spec (model_tensor_specs). Weight matrices are
// views into the GgufFile's map, used in place in whatever type the file
// holds (never a dequantized copy); the small vectors (norms, biases, RoPE
// frequency factors) are converted to f32 copies.
//
// Lifetime: views into `file`, which must outlive the ModelWeights.
// Immutable after construction; any thread may read it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cpu/matmul.h"
#include "model/model_config.h"

namespace strata {

class GgufFile;

// One transformer block. Matrices: n_rows = output features, row_length =
// input features (GGUF's [in, out] tensors, rows contiguous).
struct LayerWeights {
  std::vector<float> attn_norm;  // [n_embd]
  WeightMatrix wq;               // [n_heads * head_dim] x n_embd
  WeightMatrix wk;               // [n_kv_heads * head_dim] x n_embd
  WeightMatrix wv;               // [n_kv_heads * head_dim] x n_embd
  std::vector<float> bq;         // qwen2: [n_heads * head_dim]; else empty
  std::vector<float> bk;         // qwen2: [n_kv_heads * head_dim]; else empty
  std::vector<float> bv;         // qwen2: [n_kv_heads * head_dim]; else empty
  std::vector<float> q_norm;     // qwen3: [head_dim], applied per head; else empty
  std::vector<float> k_norm;     // qwen3: [head_dim], applied per head; else empty
  WeightMatrix wo;               // n_embd x [n_heads * head_dim]
  std::vector<float> ffn_norm;   // [n_embd]
  WeightMatrix w_gate;           // n_ffn x n_embd
  WeightMatrix w_up;             // n_ffn x n_embd
  WeightMatrix w_down;           // n_embd x n_ffn
};

class ModelWeights {
 public:
  // Binds every tensor `config`'s architecture needs (plus rope_freqs.weight
  // when config.has_rope_freqs). Throws ModelError naming the tensor that is
  // missing, has the wrong shape, or has a type Strata cannot compute with.
  // Tensors the architecture does not use are ignored.
  ModelWeights(const GgufFile& file, const ModelConfig& config);

  const ModelConfig& config() const { return config_; }
  const std::vector<LayerWeights>& layers() const { return layers_; }
  const WeightMatrix& token_embd() const { return token_embd_; }       // n_vocab x n_embd
  std::span<const float> output_norm() const { return output_norm_; }  // [n_embd]
  // The LM head: output.weight, or token_embd.weight when tied. n_vocab x n_embd.
  const WeightMatrix& output() const { return config_.tied_output ? token_embd_ : output_; }
  // Per-pair RoPE divisors [head_dim / 2]; empty when the model has none.
  std::span<const float> rope_freqs() const { return rope_freqs_; }

  // Embedding lookup: out[t * n_embd, + n_embd) = row tokens[t] of
  // token_embd, dequantized (only the rows asked for). out holds
  // tokens.size() * n_embd floats; each token must be in [0, n_vocab).
  void embed(std::span<const int32_t> tokens, std::span<float> out) const;

 private:
  ModelConfig config_;
  WeightMatrix token_embd_;
  std::vector<LayerWeights> layers_;  // n_layers
  std::vector<float> output_norm_;
  WeightMatrix output_;  // unset (data == nullptr) when tied
  std::vector<float> rope_freqs_;
};

}  // namespace strata
