// Attention for the decode rows of a step: sequences with one new row and at
// most kDecodeAttentionMaxKeys keys. cuda_attention (cuda_attention.h) hands
// it those sequences and runs its tile kernels on the rest; the tile kernels
// are built for many rows a sequence, and at batch 1 spend ~15 us a layer on
// the serial steps of one tile per kv head.
//
// Which kernel a sequence takes depends on that sequence alone (its rows and
// keys) and the model (cuda_decode_attention_fits), never on the rest of the
// batch: a sequence's result has the same bits alone and batched.
//
// A sequence's keys are cut into splits of kDecodeAttentionSplitKeys (the
// count set by its own keys), one block per (sequence, kv head, split), as
// flash-decoding does: each block does the softmax of its GQA group over its
// keys in f32, every step spread over its threads (4 threads a key for the
// scores, a warp a query for the max and sum, slices of the keys for the
// weighted sum of V, whose sums meet in shared memory in a fixed order).
// With more than one split, each writes its (max, sum, unnormalised values)
// to the scratch, and the last of them to finish adds all of them in split
// order; so the result does not depend on which block finishes last.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/device_buffer.h"
#include "kernels/cuda/cuda_attention.h"
#include "kernels/cuda/cuda_ops.h"

namespace strata {

inline constexpr int64_t kDecodeAttentionMaxKeys = 1024;
inline constexpr int64_t kDecodeAttentionSplitKeys = 64;
inline constexpr int64_t kDecodeAttentionMaxSplits =
    kDecodeAttentionMaxKeys / kDecodeAttentionSplitKeys;
inline constexpr int64_t kDecodeAttentionMaxGroup = 8;
inline constexpr int64_t kDecodeAttentionMaxHeadDim = 256;

// Whether a sequence with `rows` new rows and `keys` keys (n_past + rows) is
// the decode kernel's, when the model fits it. Host and device.
constexpr bool decode_attention_takes_sequence(int64_t rows, int64_t keys) {
  return rows == 1 && keys <= kDecodeAttentionMaxKeys;
}

// Whether the decode kernel serves this model's layout: head_dim a multiple
// of 8 (16-byte key rows) up to kDecodeAttentionMaxHeadDim, 16-byte aligned
// blocks, a GQA group of at most kDecodeAttentionMaxGroup.
bool cuda_decode_attention_fits(const CudaKvArena& arena, int64_t n_heads);

// What the splits of a sequence's keys share: each split's partial result,
// and a counter per (sequence, kv head) of the splits done, which the block
// that adds them sets back to zero (so the counters are zero between
// launches, and a captured graph can replay).
class CudaDecodeScratch {
 public:
  // Room for steps of up to n_seqs sequences of this shape; the counters
  // are zeroed on `stream` when it grows. Call only when no stream uses it.
  // Returns whether it grew (its device addresses changed).
  bool reserve(int64_t n_seqs, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim,
               cudaStream_t stream);
  // Whether it has room for n_seqs sequences of this shape.
  bool fits(int64_t n_seqs, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) const;
  float* partials() const { return partials_.as<float>(); }
  size_t partials_bytes() const { return partials_.bytes(); }
  int32_t* counters() const { return counters_.as<int32_t>(); }

 private:
  DeviceBuffer partials_;
  DeviceBuffer counters_;
};

// cuda_attention's result for the rows of the sequences that
// decode_attention_takes_sequence; the other rows of `out` are left as they
// are. Requires cuda_decode_attention_fits and room in `scratch` for the
// batch's sequences. Same arguments as cuda_attention; asynchronous on
// `stream`, launched as a dependent kernel.
void cuda_decode_attention(const CudaKvArena& arena, const CudaAttentionBatch& batch,
                           int64_t layer, int64_t n_heads, float scale, const float* q, float* out,
                           CudaDecodeScratch& scratch, cudaStream_t stream);

// Whether cuda_attention runs the decode kernel alone for this step: the
// model fits it and every sequence is its (one row, at most
// kDecodeAttentionMaxKeys keys) -- the steady decode steps.
bool cuda_attention_is_decode_only(const CudaKvArena& arena, const CudaAttentionBatch& batch,
                                   int64_t n_heads);

// cuda_finish_qkv's arguments: the raw projections, what finishes them
// (kv_out must be the step's slots in the arena's layer), and the compact
// outputs q, k and v.
struct DecodeQkvFinish {
  QkvInput in;
  QkvFinish finish;
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
};

// cuda_finish_qkv followed by cuda_attention over the finished q, in one
// launch: each block finishes its kv head's Q heads into shared memory, and
// the block of the split that holds the new row its K and V too (one warp a
// head, finish_qkv_head_into), before it attends; the same bits in q, k, v,
// the arena and out as the two launches. Requires
// cuda_attention_is_decode_only (no other kernel needs this step's K/V or
// q). One launch fewer a layer.
void cuda_finish_qkv_and_decode_attention(const CudaKvArena& arena,
                                          const CudaAttentionBatch& batch, int64_t layer,
                                          const DecodeQkvFinish& finish, float scale, float* out,
                                          CudaDecodeScratch& scratch, cudaStream_t stream);

}  // namespace strata
