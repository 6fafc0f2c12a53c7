#include "engine/cuda/cuda_model_weights.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <initializer_list>
#include <optional>

#include "gpu/cuda_check.h"
#include "kernels/cpu/ops.h"

namespace strata {

namespace {

// The rows of `parts` stacked into one matrix (GGUF rows are contiguous, so
// the bytes simply follow each other), in `storage`; nullopt unless all the
// parts share a type and a row length.
std::optional<WeightMatrix> stack_rows(std::initializer_list<const WeightMatrix*> parts,
                                       std::vector<std::byte>& storage) {
  const WeightMatrix& first = **parts.begin();
  int64_t n_rows = 0;
  for (const WeightMatrix* part : parts) {
    if (part->type != first.type || part->row_length != first.row_length) return std::nullopt;
    n_rows += part->n_rows;
  }
  const uint64_t row_bytes =
      weight_bytes(first.type, static_cast<uint64_t>(first.row_length)).value();
  storage.resize(static_cast<size_t>(row_bytes) * static_cast<size_t>(n_rows));
  std::byte* out = storage.data();
  for (const WeightMatrix* part : parts) {
    const size_t bytes = static_cast<size_t>(row_bytes) * static_cast<size_t>(part->n_rows);
    std::memcpy(out, part->data, bytes);
    out += bytes;
  }
  return WeightMatrix{.type = first.type, .data = storage.data(), .n_rows = n_rows,
                      .row_length = first.row_length};
}

}  // namespace

DeviceBuffer upload_floats(std::span<const float> values) {
  DeviceBuffer buffer(values.size_bytes());
  if (!values.empty()) {
    STRATA_CUDA_CHECK(cudaMemcpy(buffer.data(), values.data(), values.size_bytes(),
                                 cudaMemcpyHostToDevice));
  }
  return buffer;
}

CudaModelWeights::CudaModelWeights(const ModelWeights& weights, bool fuse)
    : tied_(weights.config().tied_output) {
  const ModelConfig& c = weights.config();
  auto matrix = [&](const WeightMatrix& w) {
    CudaWeightMatrix m = CudaWeightMatrix::upload(w);
    device_bytes_ += m.device_bytes();
    return m;
  };
  auto floats = [&](std::span<const float> values) {
    device_bytes_ += static_cast<int64_t>(values.size_bytes());
    return upload_floats(values);
  };
  token_embd_ = matrix(weights.token_embd());
  if (!tied_) output_ = matrix(weights.output());
  output_norm_ = floats(weights.output_norm());
  rope_inv_freqs_ =
      floats(strata::rope_inv_freqs(c.head_dim, c.rope_freq_base, weights.rope_freqs()));
  layers_.reserve(weights.layers().size());
  std::vector<std::byte> stacked;  // reused: one host copy at a time
  for (const LayerWeights& w : weights.layers()) {
    CudaLayerWeights& l = layers_.emplace_back();
    l.attn_norm = floats(w.attn_norm);
    if (std::optional<WeightMatrix> qkv = fuse ? stack_rows({&w.wq, &w.wk, &w.wv}, stacked)
                                               : std::nullopt) {
      l.wqkv = matrix(*qkv);
    } else {
      l.wq = matrix(w.wq);
      l.wk = matrix(w.wk);
      l.wv = matrix(w.wv);
    }
    l.bq = floats(w.bq);
    l.bk = floats(w.bk);
    l.bv = floats(w.bv);
    l.q_norm = floats(w.q_norm);
    l.k_norm = floats(w.k_norm);
    l.wo = matrix(w.wo);
    l.ffn_norm = floats(w.ffn_norm);
    if (std::optional<WeightMatrix> gate_up =
            fuse ? stack_rows({&w.w_gate, &w.w_up}, stacked) : std::nullopt) {
      l.w_gate_up = matrix(*gate_up);
    } else {
      l.w_gate = matrix(w.w_gate);
      l.w_up = matrix(w.w_up);
    }
    l.w_down = matrix(w.w_down);
  }
}

}  // namespace strata
