#include "engine/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/check.h"
#include "common/thread_pool.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/matmul.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

std::span<float> rows_of(std::vector<float>& buffer, int64_t row, int64_t n_rows,
                         int64_t row_length) {
  return std::span<float>(buffer).subspan(static_cast<size_t>(row * row_length),
                                          static_cast<size_t>(n_rows * row_length));
}

// Stores one head's head_dim floats as the cache's element type.
void store_head(const float* src, int64_t head_dim, WeightType dtype, std::byte* dst) {
  if (dtype == WeightType::kF32) {
    std::memcpy(dst, src, static_cast<size_t>(head_dim) * sizeof(float));
    return;
  }
  uint16_t* out = reinterpret_cast<uint16_t*>(dst);
  for (int64_t c = 0; c < head_dim; ++c) out[c] = fp32_to_fp16(src[c]);
}

}  // namespace

CpuBackend::CpuBackend(const ModelWeights& weights, const KvLayout& layout, BlockPool& kv_blocks,
                       ThreadPool& pool)
    : weights_(weights),
      layout_(layout),
      kv_blocks_(kv_blocks),
      pool_(pool),
      rope_style_(weights.config().rope_ordering == RopeOrdering::kNormal ? RopeStyle::kNormal
                                                                          : RopeStyle::kNeox),
      rope_inv_freqs_(rope_inv_freqs(weights.config().head_dim, weights.config().rope_freq_base,
                                     weights.rope_freqs())) {
  const ModelConfig& c = weights.config();
  STRATA_CHECK(layout.n_layers == c.n_layers && layout.n_kv_heads == c.n_kv_heads &&
                   layout.head_dim == c.head_dim,
               "KV layout does not match the model");
  STRATA_CHECK(kv_blocks.block_bytes() >= layout.block_bytes(), "pool blocks of ",
               kv_blocks.block_bytes(), " bytes, layout needs ", layout.block_bytes());
}

void CpuBackend::resize_activations(int64_t n_rows, int64_t n_logit_rows) {
  const ModelConfig& c = config();
  auto size = [&](std::vector<float>& buffer, int64_t n, int64_t row_length) {
    buffer.resize(static_cast<size_t>(n * row_length));
  };
  size(act_.x, n_rows, c.n_embd);
  size(act_.xn, n_rows, c.n_embd);
  size(act_.q, n_rows, c.n_heads * c.head_dim);
  size(act_.k, n_rows, c.n_kv_heads * c.head_dim);
  size(act_.v, n_rows, c.n_kv_heads * c.head_dim);
  size(act_.attn, n_rows, c.n_heads * c.head_dim);
  size(act_.proj, n_rows, c.n_embd);
  size(act_.gate, n_rows, c.n_ffn);
  size(act_.up, n_rows, c.n_ffn);
  size(act_.rope_cos, n_rows, c.head_dim / 2);
  size(act_.rope_sin, n_rows, c.head_dim / 2);
  size(act_.head_in, n_logit_rows, c.n_embd);
}

void CpuBackend::forward(std::span<const BatchSequence> batch, std::vector<float>& logits) {
  const ModelConfig& c = config();
  const TokenBatch flat = flatten_batch(batch, c.n_vocab, layout_, kv_blocks_);
  const int64_t n_rows = flat.n_rows();
  const int64_t n_logit_rows = static_cast<int64_t>(flat.logit_rows.size());
  logits.resize(static_cast<size_t>(n_logit_rows * c.n_vocab));
  if (n_rows == 0) return;
  resize_activations(n_rows, n_logit_rows);

  // Where each sequence's blocks live, and which sequence each row belongs to.
  seq_block_data_.clear();
  seq_block_start_.assign(1, 0);
  row_sequence_.resize(static_cast<size_t>(n_rows));
  for (size_t s = 0; s < flat.sequences.size(); ++s) {
    const TokenBatch::Sequence& seq = flat.sequences[s];
    for (BlockId id : seq.blocks) seq_block_data_.push_back(kv_blocks_.data(id));
    seq_block_start_.push_back(seq_block_data_.size());
    for (int64_t r = 0; r < seq.n_rows; ++r) {
      row_sequence_[static_cast<size_t>(seq.first_row + r)] = static_cast<int64_t>(s);
    }
  }

  weights_.embed(flat.tokens, act_.x);
  const int64_t n_pairs = c.head_dim / 2;
  pool_.parallel_for(n_rows, [&](int64_t row) {
    rope_cos_sin(flat.positions[static_cast<size_t>(row)], rope_inv_freqs_,
                 rows_of(act_.rope_cos, row, 1, n_pairs), rows_of(act_.rope_sin, row, 1, n_pairs));
  });

  // The first layer's attention norm; each layer then ends by norming for the next.
  pool_.parallel_for(n_rows, [&](int64_t row) {
    rms_norm(rows_of(act_.x, row, 1, c.n_embd), weights_.layers()[0].attn_norm, c.rms_norm_eps,
             rows_of(act_.xn, row, 1, c.n_embd));
  });
  for (int64_t layer = 0; layer < c.n_layers; ++layer) run_layer(layer, flat);

  // The LM head, only for the rows whose logits are wanted.
  pool_.parallel_for(n_logit_rows, [&](int64_t i) {
    const int64_t row = flat.logit_rows[static_cast<size_t>(i)];
    rms_norm(rows_of(act_.x, row, 1, c.n_embd), weights_.output_norm(), c.rms_norm_eps,
             rows_of(act_.head_in, i, 1, c.n_embd));
  });
  matmul(weights_.output(), act_.head_in, n_logit_rows, logits, pool_);
}

void CpuBackend::run_layer(int64_t layer_index, const TokenBatch& batch) {
  const ModelConfig& c = config();
  const LayerWeights& w = weights_.layers()[static_cast<size_t>(layer_index)];
  const int64_t n_rows = batch.n_rows();

  // Attention: xn holds attn_norm(x) on entry.
  matmul(w.wq, act_.xn, n_rows, act_.q, pool_);
  matmul(w.wk, act_.xn, n_rows, act_.k, pool_);
  matmul(w.wv, act_.xn, n_rows, act_.v, pool_);
  pool_.parallel_for(n_rows, [&](int64_t row) { finish_qkv_row(layer_index, batch, row); });
  attend(layer_index, batch);
  matmul(w.wo, act_.attn, n_rows, act_.proj, pool_);
  residual_and_norm(w.ffn_norm, n_rows);

  // SwiGLU feed-forward.
  matmul(w.w_gate, act_.xn, n_rows, act_.gate, pool_);
  matmul(w.w_up, act_.xn, n_rows, act_.up, pool_);
  pool_.parallel_for(n_rows, [&](int64_t row) {
    std::span<float> gate = rows_of(act_.gate, row, 1, c.n_ffn);
    silu_mul(gate, rows_of(act_.up, row, 1, c.n_ffn), gate);
  });
  matmul(w.w_down, act_.gate, n_rows, act_.proj, pool_);
  const bool last = layer_index + 1 == c.n_layers;
  // After the last layer xn is unused: the LM head norms only the rows it needs.
  residual_and_norm(last ? std::span<const float>()
                         : weights_.layers()[static_cast<size_t>(layer_index + 1)].attn_norm,
                    n_rows);
}

void CpuBackend::residual_and_norm(std::span<const float> norm, int64_t n_rows) {
  const ModelConfig& c = config();
  pool_.parallel_for(n_rows, [&](int64_t row) {
    std::span<float> x = rows_of(act_.x, row, 1, c.n_embd);
    add_in_place(x, rows_of(act_.proj, row, 1, c.n_embd));
    if (!norm.empty()) rms_norm(x, norm, c.rms_norm_eps, rows_of(act_.xn, row, 1, c.n_embd));
  });
}

void CpuBackend::finish_qkv_row(int64_t layer_index, const TokenBatch& batch, int64_t row) {
  const ModelConfig& c = config();
  const LayerWeights& w = weights_.layers()[static_cast<size_t>(layer_index)];
  const int64_t q_dim = c.n_heads * c.head_dim;
  const int64_t kv_dim = c.n_kv_heads * c.head_dim;
  std::span<float> q = rows_of(act_.q, row, 1, q_dim);
  std::span<float> k = rows_of(act_.k, row, 1, kv_dim);
  std::span<float> v = rows_of(act_.v, row, 1, kv_dim);
  if (!w.bq.empty()) {  // qwen2
    add_in_place(q, w.bq);
    add_in_place(k, w.bk);
    add_in_place(v, w.bv);
  }
  if (!w.q_norm.empty()) {  // qwen3: per-head RMSNorm, before RoPE
    rms_norm(q, w.q_norm, c.rms_norm_eps, q);
    rms_norm(k, w.k_norm, c.rms_norm_eps, k);
  }
  const int64_t n_pairs = c.head_dim / 2;
  std::span<const float> cos = rows_of(act_.rope_cos, row, 1, n_pairs);
  std::span<const float> sin = rows_of(act_.rope_sin, row, 1, n_pairs);
  rope(q, cos, sin, rope_style_);
  rope(k, cos, sin, rope_style_);

  // Append this token's K and V to its sequence's cache.
  const int64_t s = row_sequence_[static_cast<size_t>(row)];
  const int64_t position = batch.positions[static_cast<size_t>(row)];
  std::byte* block =
      kv_blocks_.data(batch.sequences[static_cast<size_t>(s)]
                          .blocks[static_cast<size_t>(position / layout_.block_tokens)]);
  const int64_t slot = position % layout_.block_tokens;
  for (int64_t h = 0; h < c.n_kv_heads; ++h) {
    store_head(k.data() + h * c.head_dim, c.head_dim, layout_.dtype,
               block + layout_.offset(layer_index, KvPart::kKey, h, slot));
    store_head(v.data() + h * c.head_dim, c.head_dim, layout_.dtype,
               block + layout_.offset(layer_index, KvPart::kValue, h, slot));
  }
}

void CpuBackend::attend(int64_t layer_index, const TokenBatch& batch) {
  const ModelConfig& c = config();
  const int64_t q_dim = c.n_heads * c.head_dim;
  const int64_t group = c.n_heads / c.n_kv_heads;  // query heads per kv head (GQA)
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));

  // One task per (query chunk, head): a long prefill splits into chunks so
  // that it spreads over the pool even for one sequence.
  attention_chunks_.clear();
  for (size_t s = 0; s < batch.sequences.size(); ++s) {
    for (int64_t r = 0; r < batch.sequences[s].n_rows; r += kAttentionChunkTokens) {
      attention_chunks_.push_back({s, r});
    }
  }
  const int64_t n_tasks = static_cast<int64_t>(attention_chunks_.size()) * c.n_heads;
  pool_.parallel_for(n_tasks, [&](int64_t task) {
    const auto [s, chunk_start] = attention_chunks_[static_cast<size_t>(task / c.n_heads)];
    const int64_t head = task % c.n_heads;
    const int64_t kv_head = head / group;
    const TokenBatch::Sequence& seq = batch.sequences[s];
    const int64_t n_tokens = std::min(kAttentionChunkTokens, seq.n_rows - chunk_start);
    const int64_t first_row = seq.first_row + chunk_start;
    const PagedKvHead kv{
        .blocks = std::span<const std::byte* const>(seq_block_data_)
                      .subspan(seq_block_start_[s], seq_block_start_[s + 1] - seq_block_start_[s]),
        .key_offset_bytes = layout_.offset(layer_index, KvPart::kKey, kv_head),
        .value_offset_bytes = layout_.offset(layer_index, KvPart::kValue, kv_head),
        .block_tokens = layout_.block_tokens,
        .head_dim = c.head_dim,
        .dtype = layout_.dtype};
    const AttentionQueries queries{.q = act_.q.data() + first_row * q_dim + head * c.head_dim,
                                   .q_stride = q_dim,
                                   .out = act_.attn.data() + first_row * q_dim + head * c.head_dim,
                                   .out_stride = q_dim,
                                   .n_tokens = n_tokens,
                                   .first_position = seq.n_past + chunk_start};
    std::vector<float> scratch(
        static_cast<size_t>(attention_scratch_floats(kv, queries.first_position + n_tokens)));
    attention_paged(kv, queries, scale, scratch);
  });
}

}  // namespace strata
