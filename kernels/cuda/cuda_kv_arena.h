// The CUDA kernels' view (CudaKvArena) of a KV block arena laid out as a
// KvLayout says: one mapping for the backend's arena and the tests' own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/cuda_attention.h"
#include "kernels/kv_layout.h"

namespace strata {

// Slot b of the arena starts at base + b * slot_bytes (slot_bytes at least
// layout.block_bytes()).
CudaKvArena cuda_kv_arena(const KvLayout& layout, std::byte* base, int64_t slot_bytes);

}  // namespace strata
