#include "model/model_tensors.h"

#include "common/str_cat.h"

namespace strata {
namespace {

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }

void add_layer(const ModelConfig& c, int64_t layer, std::vector<TensorSpec>& specs) {
  const std::string p = str_cat("blk.", layer, ".");
  const uint64_t q_dim = u(c.n_heads * c.head_dim);
  const uint64_t kv_dim = u(c.n_kv_heads * c.head_dim);
  auto matrix = [&](const char* name, uint64_t cols, uint64_t rows) {
    specs.push_back({p + name, {cols, rows}, TensorRole::kMatrix});
  };
  auto vector = [&](const char* name, uint64_t n) {
    specs.push_back({p + name, {n}, TensorRole::kVector});
  };

  vector("attn_norm.weight", u(c.n_embd));
  matrix("attn_q.weight", u(c.n_embd), q_dim);
  matrix("attn_k.weight", u(c.n_embd), kv_dim);
  matrix("attn_v.weight", u(c.n_embd), kv_dim);
  if (c.arch == Architecture::kQwen2) {
    vector("attn_q.bias", q_dim);
    vector("attn_k.bias", kv_dim);
    vector("attn_v.bias", kv_dim);
  }
  if (c.arch == Architecture::kQwen3) {
    vector("attn_q_norm.weight", u(c.head_dim));
    vector("attn_k_norm.weight", u(c.head_dim));
  }
  matrix("attn_output.weight", q_dim, u(c.n_embd));
  vector("ffn_norm.weight", u(c.n_embd));
  matrix("ffn_gate.weight", u(c.n_embd), u(c.n_ffn));
  matrix("ffn_up.weight", u(c.n_embd), u(c.n_ffn));
  matrix("ffn_down.weight", u(c.n_ffn), u(c.n_embd));
}

}  // namespace

std::vector<TensorSpec> model_tensor_specs(const ModelConfig& c) {
  std::vector<TensorSpec> specs;
  specs.push_back({"token_embd.weight", {u(c.n_embd), u(c.n_vocab)}, TensorRole::kMatrix});
  for (int64_t layer = 0; layer < c.n_layers; ++layer) add_layer(c, layer, specs);
  specs.push_back({"output_norm.weight", {u(c.n_embd)}, TensorRole::kVector});
  if (!c.tied_output) {
    specs.push_back({"output.weight", {u(c.n_embd), u(c.n_vocab)}, TensorRole::kMatrix});
  }
  return specs;
}

}  // namespace strata
