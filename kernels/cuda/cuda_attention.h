// Attention over the paged KV cache in VRAM (the T0 block arena), for one
// layer and a whole step's batch at once: decode tokens and prefill chunks
// (which may continue a cached prefix) side by side.
//
// Block layout (kernels/kv_layout.h): a block slot holds
//   [layer][k|v][kv_head][token][head_dim] of f16 or f32
// so K of (layer, kv_head) for the block's tokens starts at
//   slot + layer * layer_bytes + kv_head * head_bytes,  V at + part_bytes.
//
// Threads: asynchronous on `stream`; the caller keeps every array alive until
// the stream passes the work.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_buffer.h"
#include "kernels/cuda/cuda_kv_slots.h"
#include "kernels/weight_type.h"

namespace strata {

class CudaDecodeScratch;  // cuda_decode_attention.h

// Where the KV blocks live and how one block is laid out.
struct CudaKvArena {
  std::byte* base = nullptr;  // slot b starts at base + b * slot_bytes
  int64_t slot_bytes = 0;
  int64_t block_tokens = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;  // 64, 128 (others work, slower)
  WeightType dtype = WeightType::kF16;  // kF16 or kF32
  // Byte sizes as KvLayout computes them.
  int64_t head_bytes = 0;   // block_tokens * head_dim * elem
  int64_t part_bytes = 0;   // n_kv_heads * head_bytes
  int64_t layer_bytes = 0;  // 2 * part_bytes
};

// The step's batch, flattened. Every pointer is a device array.
// Sequence s owns the new-token rows [seq_first_row[s], seq_first_row[s+1]);
// its new tokens sit at positions seq_n_past[s], seq_n_past[s] + 1, ...; its
// block table is block_ids[seq_block_start[s], seq_block_start[s+1]).
struct CudaAttentionBatch {
  const int32_t* block_ids = nullptr;
  const int32_t* seq_block_start = nullptr;  // [n_seqs + 1]
  const int32_t* seq_first_row = nullptr;    // [n_seqs + 1]
  const int32_t* seq_n_past = nullptr;       // [n_seqs]
  const int32_t* row_seq = nullptr;          // [n_rows]: the sequence of each row
  int64_t n_seqs = 0;
  int64_t n_rows = 0;
  // Host-side bounds over the batch, for launch sizing.
  int64_t max_seq_rows = 0;  // most new rows of one sequence
  int64_t max_seq_keys = 0;  // most keys of one sequence (n_past + its rows)
};

// Where the batch's new K and V rows go in `layer`: for cuda_finish_qkv,
// which writes them as it finishes them (instead of cuda_write_kv after it).
KvSlots cuda_kv_slots(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer);

// Writes each row's new K and V (f32, [n_rows][n_kv_heads * head_dim]) into
// its slot of the sequence's block for `layer`, converted to arena.dtype.
void cuda_write_kv(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer,
                   const float* k, const float* v, cudaStream_t stream);

// out[row][h * head_dim + d] = sum_j softmax_j(scale * q_row,h . k_j) v_j[d]
// over the row's sequence keys j at positions <= the row's own (causal),
// for every row and query head h < n_heads (GQA: kv head h / (n_heads /
// n_kv_heads)). q and out: f32 [n_rows][n_heads * head_dim]. The rows' own
// K/V must already be written (cuda_write_kv, or cuda_finish_qkv's
// kv_out). `workspace` holds the tile kernels' split-K partial results; it
// is grown as needed (not while the stream uses it). `decode_scratch` is the
// decode kernel's (cuda_decode_attention), reserved by the caller for the
// batch's sequences.
void cuda_attention(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer,
                    int64_t n_heads, float scale, const float* q, float* out,
                    DeviceBuffer& workspace, CudaDecodeScratch& decode_scratch,
                    cudaStream_t stream);

// The most workspace cuda_attention takes for a batch of n_rows rows, at any
// number of keys: reserved up front, a step can be captured in a CUDA graph
// (which must not allocate).
size_t cuda_attention_max_workspace_bytes(int64_t n_rows, int64_t n_heads, int64_t head_dim);

}  // namespace strata
