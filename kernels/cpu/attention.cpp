#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cstring>

#include "common/check.h"
#include "kernels/cpu/ops.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

// Elements as the cache stores them; the loops are templated on the storage
// type so that each compiles to a plain (vectorizable) conversion loop.
inline float load(float v) { return v; }
inline float load(uint16_t v) { return fp16_to_fp32(v); }

// Copies n_rows rows of one block's keys (or values) into f32 rows.
// rows: [n_rows][head_dim] f32.
template <typename Elem>
void load_rows(const std::byte* block, int64_t offset_bytes, int64_t n_rows, int64_t head_dim,
               float* rows) {
  const Elem* src = reinterpret_cast<const Elem*>(block + offset_bytes);
  for (int64_t i = 0; i < n_rows * head_dim; ++i) rows[i] = load(src[i]);
}

// q . k over head_dim floats, in eight running lanes so that the compiler
// can vectorize the reduction without reassociating a single float sum.
float dot(const float* q, const float* k, int64_t d) {
  float lanes[8] = {};
  int64_t c = 0;
  for (; c + 8 <= d; c += 8) {
    for (int64_t l = 0; l < 8; ++l) lanes[l] += q[c + l] * k[c + l];
  }
  float sum = 0.0f;
  for (; c < d; ++c) sum += q[c] * k[c];
  for (float lane : lanes) sum += lane;
  return sum;
}

// One tile of at most kAttentionQueryTile consecutive query tokens.
//   scores: [n_tile][n_keys] (row i holds the n_keys_i = first + i + 1 keys it sees)
//   rows:   [block_tokens][head_dim] one block's keys or values in f32
template <typename Elem>
void attend_tile(const PagedKvHead& kv, const AttentionQueries& queries, int64_t tile_start,
                 int64_t n_tile, float scale, float* scores, int64_t n_keys, float* rows) {
  const int64_t d = kv.head_dim;
  const int64_t first = queries.first_position + tile_start;  // position of the tile's first query
  auto visible = [&](int64_t i) { return first + i + 1; };    // keys query i sees

  for (int64_t start = 0; start < n_keys; start += kv.block_tokens) {
    const int64_t n_rows = std::min(kv.block_tokens, n_keys - start);
    const std::byte* block = kv.blocks[static_cast<size_t>(start / kv.block_tokens)];
    load_rows<Elem>(block, kv.key_offset_bytes, n_rows, d, rows);
    for (int64_t i = 0; i < n_tile; ++i) {
      const float* q = queries.q + (tile_start + i) * queries.q_stride;
      const int64_t n_seen = std::min(n_rows, visible(i) - start);
      for (int64_t t = 0; t < n_seen; ++t) {
        scores[i * n_keys + start + t] = dot(q, rows + t * d, d) * scale;
      }
    }
  }
  for (int64_t i = 0; i < n_tile; ++i) {
    softmax(std::span<float>(scores + i * n_keys, static_cast<size_t>(visible(i))));
    std::memset(queries.out + (tile_start + i) * queries.out_stride, 0,
                static_cast<size_t>(d) * sizeof(float));
  }
  for (int64_t start = 0; start < n_keys; start += kv.block_tokens) {
    const int64_t n_rows = std::min(kv.block_tokens, n_keys - start);
    const std::byte* block = kv.blocks[static_cast<size_t>(start / kv.block_tokens)];
    load_rows<Elem>(block, kv.value_offset_bytes, n_rows, d, rows);
    for (int64_t i = 0; i < n_tile; ++i) {
      float* out = queries.out + (tile_start + i) * queries.out_stride;
      const int64_t n_seen = std::min(n_rows, visible(i) - start);
      for (int64_t t = 0; t < n_seen; ++t) {
        const float p = scores[i * n_keys + start + t];
        const float* v = rows + t * d;
        for (int64_t c = 0; c < d; ++c) out[c] += p * v[c];
      }
    }
  }
}

template <typename Elem>
void attend(const PagedKvHead& kv, const AttentionQueries& queries, float scale,
            std::span<float> scratch) {
  float* rows = scratch.data();
  float* scores = rows + kv.block_tokens * kv.head_dim;
  for (int64_t tile_start = 0; tile_start < queries.n_tokens; tile_start += kAttentionQueryTile) {
    const int64_t n_tile = std::min(kAttentionQueryTile, queries.n_tokens - tile_start);
    // Keys seen by the tile's last query; its earlier queries see a prefix.
    const int64_t n_keys = queries.first_position + tile_start + n_tile;
    attend_tile<Elem>(kv, queries, tile_start, n_tile, scale, scores, n_keys, rows);
  }
}

}  // namespace

int64_t attention_scratch_floats(const PagedKvHead& kv, int64_t n_keys) {
  return kv.block_tokens * kv.head_dim + kAttentionQueryTile * n_keys;
}

void attention_paged(const PagedKvHead& kv, const AttentionQueries& queries, float scale,
                     std::span<float> scratch) {
  const int64_t n_keys = queries.first_position + queries.n_tokens;
  STRATA_CHECK(kv.block_tokens > 0 && kv.head_dim > 0 && queries.n_tokens >= 0 &&
               queries.first_position >= 0);
  STRATA_CHECK(static_cast<int64_t>(kv.blocks.size()) * kv.block_tokens >= n_keys, "blocks ",
               kv.blocks.size(), " cannot hold ", n_keys, " tokens");
  STRATA_CHECK(static_cast<int64_t>(scratch.size()) >= attention_scratch_floats(kv, n_keys),
               "scratch ", scratch.size(), " < ", attention_scratch_floats(kv, n_keys));
  switch (kv.dtype) {
    case WeightType::kF32:
      attend<float>(kv, queries, scale, scratch);
      return;
    case WeightType::kF16:
      attend<uint16_t>(kv, queries, scale, scratch);
      return;
    default:
      STRATA_CHECK(false, "KV dtype ", weight_type_name(kv.dtype));
  }
}

}  // namespace strata
