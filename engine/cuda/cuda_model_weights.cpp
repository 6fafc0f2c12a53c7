#include "engine/cuda/cuda_model_weights.h"

#include <cuda_runtime_api.h>

#include "kernels/cpu/ops.h"
#include "kernels/cuda/cuda_check.h"

namespace strata {

DeviceBuffer upload_floats(std::span<const float> values) {
  DeviceBuffer buffer(values.size_bytes());
  if (!values.empty()) {
    STRATA_CUDA_CHECK(cudaMemcpy(buffer.data(), values.data(), values.size_bytes(),
                                 cudaMemcpyHostToDevice));
  }
  return buffer;
}

CudaModelWeights::CudaModelWeights(const ModelWeights& weights)
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
  rope_inv_freqs_ = floats(strata::rope_inv_freqs(c.head_dim, c.rope_freq_base, weights.rope_freqs()));
  layers_.reserve(weights.layers().size());
  for (const LayerWeights& w : weights.layers()) {
    CudaLayerWeights& l = layers_.emplace_back();
    l.attn_norm = floats(w.attn_norm);
    l.wq = matrix(w.wq);
    l.wk = matrix(w.wk);
    l.wv = matrix(w.wv);
    l.bq = floats(w.bq);
    l.bk = floats(w.bk);
    l.bv = floats(w.bv);
    l.q_norm = floats(w.q_norm);
    l.k_norm = floats(w.k_norm);
    l.wo = matrix(w.wo);
    l.ffn_norm = floats(w.ffn_norm);
    l.w_gate = matrix(w.w_gate);
    l.w_up = matrix(w.w_up);
    l.w_down = matrix(w.w_down);
  }
}

}  // namespace strata
