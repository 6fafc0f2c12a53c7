// Device side of KvSlots (cuda_kv_slots.h).
#pragma once

#include <cuda_fp16.h>

#include "kernels/cuda/cuda_kv_slots.h"

namespace strata {

// Where row `row`'s K head `head` starts in its sequence's block (its V
// head: part_bytes on): the row's position is its sequence's n_past plus
// its place among the sequence's new rows.
__device__ __forceinline__ std::byte* kv_key_head(const KvSlots& s, int64_t row, int head) {
  const int seq = s.row_seq[row];
  const int pos = s.seq_n_past[seq] + static_cast<int>(row - s.seq_first_row[seq]);
  const int64_t block = s.block_ids[s.seq_block_start[seq] + pos / s.block_tokens];
  return s.kv + block * s.slot_bytes + head * s.head_bytes + (pos % s.block_tokens) * s.row_bytes;
}

// Elements i and i + 1 of a head, stored at `head_start` in the arena's type.
__device__ __forceinline__ void store_kv_pair(const KvSlots& s, std::byte* head_start, int i,
                                              float2 x) {
  if (s.f16) {
    reinterpret_cast<__half2*>(head_start)[i / 2] = __floats2half2_rn(x.x, x.y);
  } else {
    reinterpret_cast<float2*>(head_start)[i / 2] = x;
  }
}

}  // namespace strata
