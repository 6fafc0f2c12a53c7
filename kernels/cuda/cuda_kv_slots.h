// Where a step's new K and V rows go in one layer of the paged KV arena
// (cuda_kv_slots in cuda_attention.h builds it): what cuda_write_kv writes
// through, and what lets cuda_finish_qkv write K and V as it finishes them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata {

struct KvSlots {
  std::byte* kv = nullptr;  // the layer's first byte in slot 0; null: write nothing
  int64_t slot_bytes = 0;
  int64_t head_bytes = 0;  // between kv heads
  int64_t part_bytes = 0;  // from K to V
  int64_t row_bytes = 0;   // between tokens: head_dim * element size
  int block_tokens = 0;
  bool f16 = true;  // elements are f16, else f32
  // The step's batch (device arrays, as CudaAttentionBatch holds them).
  const int32_t* block_ids = nullptr;
  const int32_t* seq_block_start = nullptr;
  const int32_t* seq_first_row = nullptr;
  const int32_t* seq_n_past = nullptr;
  const int32_t* row_seq = nullptr;
};

}  // namespace strata
