// CpuBackend: the batched forward pass of llama / qwen2 / qwen3 on the CPU,
// computing what Hugging Face transformers computes, with the KV cache in
// BlockPool slots (the T1 tier; the CPU backend has no T0). All new tokens
// of all sequences go through each weight matrix together; attention runs
// per (sequence, query head) on the thread pool.
//
// Threads: the engine thread calls forward(); the work inside is spread over
// `pool`. Lifetime: weights, kv_blocks and pool must outlive the backend.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend.h"
#include "engine/cpu/token_batch.h"
#include "kernels/cpu/ops.h"
#include "kernels/kv_layout.h"
#include "model/model_weights.h"
#include "tiering/block_pool.h"

namespace strata {

class ThreadPool;

class CpuBackend final : public Backend {
 public:
  // Attention work is split into tasks of at most this many query tokens of
  // one sequence and one head.
  static constexpr int64_t kAttentionChunkTokens = 64;

  // layout must be kv_layout_for(weights.config(), ...) and every
  // slot of kv_blocks must hold layout.block_bytes() (both checked).
  CpuBackend(const ModelWeights& weights, const KvLayout& layout, BlockPool& kv_blocks,
             ThreadPool& pool);

  const ModelConfig& config() const override { return weights_.config(); }
  const KvLayout& kv_layout() const override { return layout_; }
  void forward(std::span<const BatchSequence> batch, std::vector<float>& logits) override;

 private:
  // Activations of one step, rows = the batch's new tokens (TokenBatch rows).
  // Kept between steps so that steady decoding allocates nothing.
  struct Activations {
    std::vector<float> x;         // [n_rows][n_embd] residual stream
    std::vector<float> xn;        // [n_rows][n_embd] normalised input of the current sublayer
    std::vector<float> q;         // [n_rows][n_heads][head_dim]
    std::vector<float> k;         // [n_rows][n_kv_heads][head_dim]
    std::vector<float> v;         // [n_rows][n_kv_heads][head_dim]
    std::vector<float> attn;      // [n_rows][n_heads][head_dim] attention output
    std::vector<float> proj;      // [n_rows][n_embd] sublayer output before the residual add
    std::vector<float> gate;      // [n_rows][n_ffn] then silu(gate) * up
    std::vector<float> up;        // [n_rows][n_ffn]
    std::vector<float> rope_cos;  // [n_rows][head_dim / 2] at each row's position
    std::vector<float> rope_sin;  // [n_rows][head_dim / 2]
    std::vector<float> head_in;   // [n_logit_rows][n_embd] final-normed rows for the LM head
  };

  void resize_activations(int64_t n_rows, int64_t n_logit_rows);
  void run_layer(int64_t layer_index, const TokenBatch& batch);
  // Bias, per-head norm and RoPE on row's Q and K; then its K and V into its block.
  void finish_qkv_row(int64_t layer_index, const TokenBatch& batch, int64_t row);
  void attend(int64_t layer_index, const TokenBatch& batch);
  // x += proj, then xn = rms_norm(x, norm) for every row.
  void residual_and_norm(std::span<const float> norm, int64_t n_rows);

  const ModelWeights& weights_;
  KvLayout layout_;
  BlockPool& kv_blocks_;
  ThreadPool& pool_;
  RopeStyle rope_style_;
  std::vector<float> rope_inv_freqs_;  // [head_dim / 2]
  Activations act_;
  // Per sequence of the current step: its block addresses in token order,
  // sequence s at [seq_block_start_[s], seq_block_start_[s + 1]).
  std::vector<const std::byte*> seq_block_data_;
  std::vector<size_t> seq_block_start_;
  std::vector<int64_t> row_sequence_;  // [n_rows] index in batch.sequences of each row
  struct AttentionChunk {
    size_t sequence;      // index in batch.sequences
    int64_t first_token;  // of the chunk, counted from the sequence's first new token
  };
  std::vector<AttentionChunk> attention_chunks_;  // the current layer's attention tasks / n_heads
};

}  // namespace strata
