// Causal softmax attention of one query head over one sequence's keys and
// values in a paged KV cache (the blocks of DESIGN.md's "The KV block").
// Knows nothing of models or pools: the caller hands it the block addresses
// and where this layer's kv head sits inside each block.
// Pure function, any thread; the CPU backend runs one call per (sequence,
// query head) in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/weight_type.h"

namespace strata {

// K and V of one kv head of one layer, for one sequence. Token t lives in
// blocks[t / block_tokens] at row t % block_tokens of that block's
//   keys:   block + key_offset_bytes,   [block_tokens][head_dim] of dtype
//   values: block + value_offset_bytes, [block_tokens][head_dim] of dtype
struct PagedKvHead {
  std::span<const std::byte* const> blocks = {};  // the sequence's blocks in token order
  int64_t key_offset_bytes = 0;
  int64_t value_offset_bytes = 0;
  int64_t block_tokens = 0;
  int64_t head_dim = 0;
  WeightType dtype = WeightType::kF16;  // kF16 or kF32
};

// The queries of one head for a run of consecutive new tokens of a sequence.
// Token i's query is q[i * q_stride, + head_dim), its result goes to
// out[i * out_stride, + head_dim); it sits at position first_position + i and
// attends to the keys at positions [0, first_position + i] (causal).
struct AttentionQueries {
  const float* q = nullptr;
  int64_t q_stride = 0;  // floats between consecutive tokens' queries
  float* out = nullptr;
  int64_t out_stride = 0;  // floats between consecutive tokens' outputs
  int64_t n_tokens = 0;
  int64_t first_position = 0;
};

// Queries are processed in tiles of this many tokens: each key and value is
// read (and converted to f32) once per tile rather than once per query.
inline constexpr int64_t kAttentionQueryTile = 16;

// Floats of scratch attention_paged needs for queries ending at n_keys keys.
int64_t attention_scratch_floats(const PagedKvHead& kv, int64_t n_keys);

// out_i = sum_j softmax_j(scale * q_i . k_j) v_j, scores in f32.
// scratch: at least attention_scratch_floats(kv, first_position + n_tokens).
// kv.blocks must cover first_position + n_tokens tokens.
void attention_paged(const PagedKvHead& kv, const AttentionQueries& queries, float scale,
                     std::span<float> scratch);

}  // namespace strata
