#include "kernels/cpu/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/fp16.h"

namespace strata {
namespace {

// Dense causal attention in double: the reference for one head.
std::vector<double> dense_attention(const std::vector<float>& q, const std::vector<float>& k,
                                    const std::vector<float>& v, int64_t d, int64_t first_position,
                                    int64_t n_tokens, double scale) {
  std::vector<double> out(static_cast<size_t>(n_tokens * d), 0.0);
  for (int64_t i = 0; i < n_tokens; ++i) {
    const int64_t n_keys = first_position + i + 1;
    std::vector<double> s(static_cast<size_t>(n_keys));
    double max = -1e300;
    for (int64_t j = 0; j < n_keys; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < d; ++c) dot += double{q[i * d + c]} * k[j * d + c];
      s[j] = dot * scale;
      max = std::max(max, s[j]);
    }
    double sum = 0;
    for (double& x : s) sum += (x = std::exp(x - max));
    for (int64_t j = 0; j < n_keys; ++j) {
      for (int64_t c = 0; c < d; ++c) out[i * d + c] += s[j] / sum * v[j * d + c];
    }
  }
  return out;
}

// Keys and values of `n_keys` tokens scattered over blocks in a shuffled
// order, each block also holding other (garbage) heads around this one.
struct PagedFixture {
  int64_t d = 12, block_tokens = 5, n_keys = 53;
  WeightType dtype;
  std::vector<float> k, v;                      // dense [n_keys][d], as stored (rounded for f16)
  std::vector<std::vector<std::byte>> storage;  // the blocks
  std::vector<const std::byte*> blocks;         // in token order
  int64_t key_offset = 0, value_offset = 0;

  explicit PagedFixture(WeightType type) : dtype(type) {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal;
    const int64_t elem = type == WeightType::kF32 ? 4 : 2;
    const int64_t head_bytes = block_tokens * d * elem;
    key_offset = head_bytes;  // garbage head first, then keys, garbage, values
    value_offset = 3 * head_bytes;
    const int64_t n_blocks = (n_keys + block_tokens - 1) / block_tokens;
    storage.assign(static_cast<size_t>(n_blocks), std::vector<std::byte>(4 * head_bytes));
    for (auto& block : storage) {
      for (std::byte& b : block) b = static_cast<std::byte>(rng() & 0x3b);  // finite garbage
    }
    std::vector<size_t> order(static_cast<size_t>(n_blocks));
    for (size_t i = 0; i < order.size(); ++i) order[i] = (i * 3 + 1) % order.size();
    for (size_t i = 0; i < order.size(); ++i) blocks.push_back(storage[order[i]].data());
    k.resize(static_cast<size_t>(n_keys * d));
    v.resize(k.size());
    for (int64_t t = 0; t < n_keys; ++t) {
      for (int64_t c = 0; c < d; ++c) {
        store(t, c, key_offset, normal(rng), k);
        store(t, c, value_offset, normal(rng), v);
      }
    }
  }
  void store(int64_t t, int64_t c, int64_t offset, float value, std::vector<float>& dense) {
    std::byte* row = const_cast<std::byte*>(blocks[static_cast<size_t>(t / block_tokens)]) + offset;
    const int64_t index = (t % block_tokens) * d + c;
    if (dtype == WeightType::kF32) {
      reinterpret_cast<float*>(row)[index] = value;
    } else {
      const uint16_t half = fp32_to_fp16(value);
      reinterpret_cast<uint16_t*>(row)[index] = half;
      value = fp16_to_fp32(half);
    }
    dense[static_cast<size_t>(t * d + c)] = value;
  }
  PagedKvHead head() const {
    return {.blocks = blocks,
            .key_offset_bytes = key_offset,
            .value_offset_bytes = value_offset,
            .block_tokens = block_tokens,
            .head_dim = d,
            .dtype = dtype};
  }
};

void check_against_dense(WeightType dtype, int64_t n_tokens) {
  PagedFixture kv(dtype);
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  // Queries for the last n_tokens positions (a chunk that starts mid-block),
  // stored with a stride wider than head_dim as in a [token][head][dim] buffer.
  const int64_t first = kv.n_keys - n_tokens, stride = 3 * kv.d;
  std::vector<float> q_strided(static_cast<size_t>(n_tokens * stride));
  std::vector<float> q_dense(static_cast<size_t>(n_tokens * kv.d));
  for (int64_t i = 0; i < n_tokens; ++i) {
    for (int64_t c = 0; c < kv.d; ++c) {
      q_dense[i * kv.d + c] = q_strided[i * stride + kv.d + c] = normal(rng);
    }
  }
  std::vector<float> out(static_cast<size_t>(n_tokens * stride), -7.0f);
  std::vector<float> scratch(static_cast<size_t>(attention_scratch_floats(kv.head(), kv.n_keys)));
  const float scale = 1.0f / std::sqrt(static_cast<float>(kv.d));
  attention_paged(kv.head(),
                  {.q = q_strided.data() + kv.d,
                   .q_stride = stride,
                   .out = out.data() + kv.d,
                   .out_stride = stride,
                   .n_tokens = n_tokens,
                   .first_position = first},
                  scale, scratch);
  std::vector<double> want = dense_attention(q_dense, kv.k, kv.v, kv.d, first, n_tokens, scale);
  for (int64_t i = 0; i < n_tokens; ++i) {
    for (int64_t c = 0; c < kv.d; ++c) {
      EXPECT_NEAR(out[i * stride + kv.d + c], want[i * kv.d + c], 2e-6) << i << "," << c;
      EXPECT_EQ(out[i * stride + c], -7.0f);  // neighbours untouched
    }
  }
}

// 1 query (decode), 9 (part of a tile), 37 (three tiles, the first starting mid-block).
TEST(AttentionTest, PagedF32MatchesDenseCausalAttention) {
  for (int64_t n : {1, 9, 37}) check_against_dense(WeightType::kF32, n);
}
TEST(AttentionTest, PagedF16MatchesDenseCausalAttention) {
  for (int64_t n : {1, 9, 37}) check_against_dense(WeightType::kF16, n);
}

TEST(AttentionTest, FirstTokenAttendsOnlyToItself) {
  PagedFixture kv(WeightType::kF32);
  std::vector<float> q(static_cast<size_t>(kv.d), 100.0f);
  std::vector<float> out(static_cast<size_t>(kv.d));
  std::vector<float> scratch(static_cast<size_t>(attention_scratch_floats(kv.head(), 1)));
  attention_paged(kv.head(),
                  {.q = q.data(),
                   .q_stride = kv.d,
                   .out = out.data(),
                   .out_stride = kv.d,
                   .n_tokens = 1,
                   .first_position = 0},
                  1.0f, scratch);
  for (int64_t c = 0; c < kv.d; ++c) EXPECT_FLOAT_EQ(out[c], kv.v[c]);
}

}  // namespace
}  // namespace strata
