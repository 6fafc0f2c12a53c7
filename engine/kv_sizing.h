// KV sizing: a model's KV block layout and how many blocks each tier gets —
// the engine's policy, decided once per loaded model and passed down to the
// backend, the scheduler and the tiers.
//
// Threads: pure functions; any thread.
#pragma once

#include <cstdint>

#include "kernels/kv_layout.h"
#include "kernels/weight_type.h"
#include "model/model_config.h"

namespace strata {

// The KV block layout of `config`'s attention layers. block_tokens > 0; dtype
// kF16 (the default: half the bytes) or kF32 (exact, for reference checks).
KvLayout kv_layout_for(const ModelConfig& config,
                       int64_t block_tokens = KvLayout::kDefaultBlockTokens,
                       WeightType dtype = WeightType::kF16);

// How many KV blocks each tier gets, for max_running sequences of up to
// context_length tokens.
struct KvBudget {
  // The tier the backend computes in: exactly this on the CPU (host memory);
  // on a GPU at most this many, within what the VRAM left by the weights holds.
  int64_t n_compute_blocks = 0;
  int64_t n_gpu_blocks = 0;
  // A GPU's pinned host tier (T1) below the VRAM; 0: n_compute_blocks.
  int64_t n_host_blocks = 0;
};

inline constexpr int64_t kDefaultHostCacheCap = int64_t{2} << 30;

// host_cache_bytes caps host memory: 0 gives room for max_running full
// contexts, at most kDefaultHostCacheCap; a figure is used as it is. With
// n_blocks > 0 (a benchmark or a one-prompt run that knows its need) every
// tier gets that many, the host tier within host_cache_bytes when given.
KvBudget kv_budget(const KvLayout& layout, int64_t context_length, int64_t max_running,
                   int64_t host_cache_bytes, int64_t n_blocks = 0);

}  // namespace strata
