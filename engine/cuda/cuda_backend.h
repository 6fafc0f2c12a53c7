// CudaBackend: the batched forward pass of llama / qwen2 / qwen3 on an NVIDIA
// GPU, computing what CpuBackend computes (same formulas; f32 activations,
// rounded to f16 where tensor cores take them), with the weights and the KV
// blocks in VRAM. The KV blocks live in the T0
// arena: slot b of the arena is BlockId b of the BlockPool the engine
// allocates from (which only names the slots). Blocks move between the arena
// and host memory through a CudaBlockCopier on a stream of its own.
//
// One step is one stream of kernel launches: the step's metadata goes up in
// one copy, the logits rows come down in one copy, and forward() returns
// when they have arrived. forward_and_choose() instead chooses each row's
// token on the GPU (cuda_token_choice.h): the sampling state goes up, the
// tokens (and logprobs) come down, and the logits never leave VRAM. Decode
// steps of up to CudaMatmul::kMaxVectorTokens sequences replay a CUDA graph
// captured once per batch size and context bucket (a decode step is a few
// hundred small launches: launched one by one the GPU waits on the CPU
// between them).
//
// Threads: the engine thread only. The current CUDA device is the one the
// backend was built on.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <utility>
#include <span>
#include <vector>

#include "engine/backend.h"
#include "engine/cuda/cuda_model_weights.h"
#include "gpu/device_buffer.h"
#include "kernels/cuda/cuda_attention.h"
#include "kernels/cuda/cuda_decode_attention.h"
#include "kernels/cuda/cuda_matmul.h"
#include "kernels/cuda/cuda_token_choice.h"
#include "kernels/kv_layout.h"
#include "tiering/block_pool.h"

namespace strata {

struct TokenBatch;

class CudaBackend final : public Backend {
 public:
  // Allocates the KV arena of kv_blocks.n_total() slots (CudaError when
  // VRAM is short). weights and kv_blocks must outlive the backend.
  CudaBackend(const CudaModelWeights& weights, const ModelConfig& config, const KvLayout& layout,
              const BlockPool& kv_blocks, bool use_graphs = true);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  const ModelConfig& config() const override { return config_; }
  const KvLayout& kv_layout() const override { return layout_; }
  void forward(std::span<const BatchSequence> batch, std::vector<float>& logits) override;
  bool chooses_tokens() const override { return true; }
  void forward_and_choose(std::span<const BatchSequence> batch,
                          std::span<const TokenChoice> choices,
                          std::vector<SampledToken>& chosen) override;

  // The arena: slot b (block b) at kv_arena() + b * slot_bytes(layout).
  std::byte* kv_arena() const { return arena_view_.base; }
  int64_t kv_arena_bytes() const { return static_cast<int64_t>(kv_arena_.bytes()); }
  // Bytes of one arena slot (a block, padded for alignment).
  static int64_t slot_bytes(const KvLayout& layout);

 private:
  // Enqueues the whole pass up to the logits rows in act_.logits; returns
  // how many rows there are.
  int64_t enqueue_step(std::span<const BatchSequence> batch);
  void upload_step(const TokenBatch& flat);
  // Enqueues the choices' upload, cuda_choose_tokens and the results' download.
  void enqueue_choices(std::span<const TokenChoice> choices);
  void resize_activations(int64_t n_rows, int64_t n_logit_rows);
  // Every launch of a step, from the embedding to the logits rows.
  void enqueue_forward(int64_t n_rows, int64_t n_logit_rows);
  void run_layer(int64_t layer_index, int64_t n_rows);
  // Enqueues the Q/K/V projections and returns their finishing (biases,
  // norms, RoPE; K and V into the layer's KV slots), which run_layer
  // enqueues or hands to the decode attention kernel.
  DecodeQkvFinish project_qkv(const CudaLayerWeights& w, int64_t layer_index, int64_t n_rows);
  // gate = silu(xn W_gate) * (xn W_up).
  void gate_and_up(const CudaLayerWeights& w, int64_t n_rows);
  // Where x is staged for the integer decode product `w` (act_.x_staged), or
  // null where that product does not want it staged
  // (cuda_kquant_decode_wants_staged_x). The norms stage xn for the Q/K/V
  // and gate/up products as they write it.
  uint8_t* staging_for(const CudaWeightMatrix& w, int64_t n_rows) const;
  // x staged for `w` by a launch of its own (the O and down products, which
  // no norm precedes), or null as above.
  const uint8_t* stage_for(const CudaWeightMatrix& w, const float* x, int64_t n_rows);
  // Replays (capturing first if needed) the graph of a decode step.
  void launch_decode_graph(int64_t n_rows);
  void drop_graphs();

  ModelConfig config_;
  KvLayout layout_;
  const BlockPool& kv_blocks_;
  cudaStream_t stream_ = nullptr;
  const CudaModelWeights& weights_;
  DeviceBuffer kv_arena_;
  CudaKvArena arena_view_;
  CudaMatmul matmul_;
  DeviceBuffer attention_workspace_;
  CudaDecodeScratch decode_attention_scratch_;

  // Activations of one step (rows = the step's new tokens), grown as needed.
  struct Activations {
    DeviceBuffer x, xn, qkv, q, k, v, attn, proj, gate_up, gate, up, head_in, logits;
    // The next product's x as the integer decode products stage it
    // (cuda_kquant_staged_x_bytes), for steps of up to kMaxKQuantDecodeTokens
    // rows as long as the longest input row.
    DeviceBuffer x_staged;
  } act_;
  int64_t rows_capacity_ = 0;
  int64_t logit_rows_capacity_ = 0;

  // Step metadata: int32 arrays packed into one buffer (see upload_step).
  std::vector<int32_t> meta_host_;
  int32_t* meta_pinned_ = nullptr;  // cudaHostAlloc'd staging of meta_host_
  size_t meta_pinned_capacity_ = 0;
  DeviceBuffer meta_device_;
  struct MetaViews {
    const int32_t* tokens = nullptr;
    const int32_t* positions = nullptr;
    const int32_t* logit_rows = nullptr;
  } meta_;
  CudaAttentionBatch attention_batch_;
  float* logits_pinned_ = nullptr;  // cudaHostAlloc'd landing of the logits rows
  size_t logits_pinned_capacity_ = 0;

  // Token choice: [CudaChoiceParams x n | CudaPenaltyToken ...] staged in
  // pinned memory and copied up in one go; the results come back the same way.
  std::byte* choice_pinned_ = nullptr;
  size_t choice_pinned_capacity_ = 0;
  DeviceBuffer choice_device_;
  CudaTokenChoice* results_pinned_ = nullptr;
  size_t results_pinned_capacity_ = 0;
  DeviceBuffer results_device_;

  // Decode graphs by (rows, context bucket). A graph bakes in every buffer
  // address: any reallocation drops them all (buffers_generation_ moves).
  const bool use_graphs_;
  struct DecodeGraph {
    cudaGraphExec_t exec = nullptr;
    uint64_t generation = 0;
  };
  std::map<std::pair<int64_t, int64_t>, DecodeGraph> graphs_;
  uint64_t buffers_generation_ = 0;
};

}  // namespace strata
