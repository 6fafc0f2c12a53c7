// Device side of Q/K/V finishing (cuda_finish_qkv in cuda_ops.h): one warp
// finishes one head of one row. finish_qkv_kernel runs it over every head of
// a step; the decode attention kernel runs it for its own heads before it
// attends (cuda_finish_qkv_and_decode_attention), with the same bits.
#pragma once

#include "kernels/cuda/cuda_kv_slots.cuh"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_warp_reduce.cuh"

namespace strata {

// A finished K or V head (compact, `head_dim` floats at `src`) into its slot.
__device__ inline void store_kv_head(const KvSlots& slots, int64_t row, int head, bool value,
                                     const float* src, int64_t head_dim) {
  __syncwarp();  // the elements were written by other lanes
  std::byte* at = kv_key_head(slots, row, head) + (value ? slots.part_bytes : 0);
  for (int64_t i = 2 * (threadIdx.x % 32); i < head_dim; i += 64) {
    store_kv_pair(slots, at, static_cast<int>(i), make_float2(src[i], src[i + 1]));
  }
}

// Head `head` of row `row`, counting the row's Q heads, then its K heads,
// then its V heads, by the whole calling warp: copied to `dst` (head_dim
// floats: its compact place in q, k or v, or shared memory) with its bias,
// then normed and rotated there (and K and V stored in the KV arena when
// f.kv_out says where).
__device__ inline void finish_qkv_head_into(const QkvInput& in, const QkvFinish& f, bool neox,
                                            int64_t row, int64_t head, float* dst) {
  const int lane = threadIdx.x % 32;
  const bool value = head >= f.n_heads + f.n_kv_heads;
  const bool key = head >= f.n_heads && !value;
  const int64_t d = f.head_dim;
  const float* src;
  const float* bias;
  const float* norm = nullptr;
  bool rotate = true;
  if (head < f.n_heads) {
    src = in.q + row * in.q_stride;
    bias = f.bq;
    norm = f.q_norm;
  } else if ((head -= f.n_heads) < f.n_kv_heads) {
    src = in.k + row * in.k_stride;
    bias = f.bk;
    norm = f.k_norm;
  } else {
    head -= f.n_kv_heads;
    src = in.v + row * in.v_stride;
    bias = f.bv;
    rotate = false;
  }
  src += head * d;
  for (int64_t i = lane; i < d; i += 32) {
    dst[i] = src[i] + (bias != nullptr ? bias[head * d + i] : 0.0f);
  }
  if (!rotate) {
    if (f.kv_out.kv != nullptr) store_kv_head(f.kv_out, row, static_cast<int>(head), true, dst, d);
    return;
  }
  if (norm != nullptr) {
    float sum_squares = 0.0f;
    for (int64_t i = lane; i < d; i += 32) sum_squares += dst[i] * dst[i];
    const float inv_rms = 1.0f / sqrtf(warp_sum(sum_squares) / static_cast<float>(d) + f.eps);
    for (int64_t i = lane; i < d; i += 32) dst[i] = dst[i] * inv_rms * norm[i];
  }
  __syncwarp();  // the pairs below cross the lanes that wrote them
  const int64_t n_pairs = d / 2;
  const float pos = static_cast<float>(f.positions[row]);
  for (int64_t i = lane; i < n_pairs; i += 32) {
    const int64_t first = neox ? i : 2 * i;
    const int64_t second = neox ? i + n_pairs : 2 * i + 1;
    const float angle = pos * f.inv_freqs[i];
    const float c = cosf(angle);
    const float s = sinf(angle);
    const float a = dst[first];
    const float b = dst[second];
    dst[first] = a * c - b * s;
    dst[second] = a * s + b * c;
  }
  if (key && f.kv_out.kv != nullptr) {
    store_kv_head(f.kv_out, row, static_cast<int>(head), false, dst, d);
  }
}

// finish_qkv_head_into the head's compact place: q [row][n_heads][head_dim],
// k and v [row][n_kv_heads][head_dim].
__device__ inline void finish_qkv_head(const QkvInput& in, const QkvFinish& f, bool neox,
                                       int64_t row, int64_t head, float* q, float* k, float* v) {
  const int64_t d = f.head_dim;
  float* dst;
  if (head < f.n_heads) {
    dst = q + (row * f.n_heads + head) * d;
  } else if (head < f.n_heads + f.n_kv_heads) {
    dst = k + (row * f.n_kv_heads + head - f.n_heads) * d;
  } else {
    dst = v + (row * f.n_kv_heads + head - f.n_heads - f.n_kv_heads) * d;
  }
  finish_qkv_head_into(in, f, neox, row, head, dst);
}

}  // namespace strata
