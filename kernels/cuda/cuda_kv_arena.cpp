#include "kernels/cuda/cuda_kv_arena.h"

#include "common/check.h"

namespace strata {

CudaKvArena cuda_kv_arena(const KvLayout& layout, std::byte* base, int64_t slot_bytes) {
  STRATA_CHECK(slot_bytes >= layout.block_bytes(), "arena slots of ", slot_bytes,
               " bytes hold no block of ", layout.block_bytes());
  return {.base = base,
          .slot_bytes = slot_bytes,
          .block_tokens = layout.block_tokens,
          .n_kv_heads = layout.n_kv_heads,
          .head_dim = layout.head_dim,
          .dtype = layout.dtype,
          .head_bytes = layout.head_bytes(),
          .part_bytes = layout.part_bytes(),
          .layer_bytes = layout.layer_bytes()};
}

}  // namespace strata
