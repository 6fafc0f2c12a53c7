// ReferenceModel: a naive forward pass written independently of the
// backend, to check it. Every weight dequantized into dense doubles, a dense
// per-layer KV array, one sequence from position 0, straightforward loops —
// the math of Hugging Face's LlamaForCausalLM / Qwen2ForCausalLM /
// Qwen3ForCausalLM on GGUF tensors (llama's Q/K rows as llama.cpp's
// converter permutes them, hence interleaved RoPE pairs).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/model_config.h"

namespace strata::testing {

// How the reference holds llama's Q and K rows.
enum class LlamaQkOrder {
  kGguf,  // as stored: llama.cpp's converter interleaved each head's halves -> RoPE pairs (2i,
          // 2i+1)
  kHf,    // un-permuted back to Hugging Face's order -> rotate_half pairs (i, i + head_dim/2)
};

class ReferenceModel {
 public:
  explicit ReferenceModel(const GgufFile& file, LlamaQkOrder llama_order = LlamaQkOrder::kGguf);

  // Logits of every position of `tokens`: [tokens.size()][n_vocab].
  std::vector<std::vector<double>> forward(std::span<const int32_t> tokens) const;

 private:
  using Matrix = std::vector<std::vector<double>>;  // [out][in]
  struct Layer {
    std::vector<double> attn_norm, bq, bk, bv, q_norm, k_norm, ffn_norm;
    Matrix wq, wk, wv, wo, w_gate, w_up, w_down;
  };
  Matrix matrix(const GgufFile& file, const std::string& name) const;
  std::vector<double> vector(const GgufFile& file, const std::string& name) const;

  ModelConfig config_;
  bool neox_ = false;     // RoPE pairs (i, i + head_dim/2), else (2i, 2i+1)
  Matrix embd_, output_;  // [n_vocab][n_embd]
  std::vector<double> output_norm_;
  std::vector<double> rope_factors_;  // [head_dim / 2], empty when absent
  std::vector<Layer> layers_;
};

}  // namespace strata::testing
