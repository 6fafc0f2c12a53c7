// CudaModelWeights: a model's weights uploaded to VRAM once at start — the
// matrices in the CUDA kernels' layout (CudaWeightMatrix, values bit for bit
// the file's), the norms, biases and RoPE frequencies as f32 arrays.
//
// Where a layer's Q, K and V matrices share a type they are uploaded as one
// matrix of their rows stacked (wqkv), and so are the FFN's gate and up
// (w_gate_up): one launch and one larger, more efficient pass over the
// weights instead of three or two. Files that mix types (e.g. a Q4_K_M with
// a Q6_K V) keep them apart.
//
// Threads: built on one thread; immutable after, read by kernels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpu/device_buffer.h"
#include "kernels/cuda/cuda_weights.h"
#include "model/model_weights.h"

namespace strata {

struct CudaLayerWeights {
  DeviceBuffer attn_norm;
  CudaWeightMatrix wqkv;          // [q | k | v] rows, or empty (n_rows 0) and:
  CudaWeightMatrix wq, wk, wv;    //   the three apart (empty when wqkv is set)
  DeviceBuffer bq, bk, bv;        // qwen2; empty otherwise
  DeviceBuffer q_norm, k_norm;    // qwen3; empty otherwise
  CudaWeightMatrix wo;
  DeviceBuffer ffn_norm;
  CudaWeightMatrix w_gate_up;     // [gate | up] rows, or empty and:
  CudaWeightMatrix w_gate, w_up;  //   the two apart
  CudaWeightMatrix w_down;

  bool qkv_fused() const { return wqkv.n_rows() > 0; }
  bool gate_up_fused() const { return w_gate_up.n_rows() > 0; }
};

class CudaModelWeights {
 public:
  // Throws CudaError when the weights do not fit in VRAM. `fuse`: stack
  // matrices of one type as above (off only to test the separate path).
  explicit CudaModelWeights(const ModelWeights& weights, bool fuse = true);

  const std::vector<CudaLayerWeights>& layers() const { return layers_; }
  const CudaWeightMatrix& token_embd() const { return token_embd_; }
  const CudaWeightMatrix& output() const { return tied_ ? token_embd_ : output_; }
  const float* output_norm() const { return output_norm_.as<float>(); }
  const float* rope_inv_freqs() const { return rope_inv_freqs_.as<float>(); }
  int64_t device_bytes() const { return device_bytes_; }

 private:
  bool tied_ = false;
  CudaWeightMatrix token_embd_;
  CudaWeightMatrix output_;
  DeviceBuffer output_norm_;
  DeviceBuffer rope_inv_freqs_;  // [head_dim / 2]
  std::vector<CudaLayerWeights> layers_;
  int64_t device_bytes_ = 0;
};

// A device copy of values (empty buffer for an empty span).
DeviceBuffer upload_floats(std::span<const float> values);

}  // namespace strata
