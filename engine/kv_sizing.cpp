#include "engine/kv_sizing.h"

#include <algorithm>

#include "common/check.h"

namespace strata {

KvLayout kv_layout_for(const ModelConfig& config, int64_t block_tokens, WeightType dtype) {
  STRATA_CHECK(block_tokens > 0, "block_tokens ", block_tokens);
  STRATA_CHECK(dtype == WeightType::kF16 || dtype == WeightType::kF32,
               "KV dtype must be f16 or f32, not ", weight_type_name(dtype));
  return KvLayout{.n_layers = config.n_layers,
                  .n_kv_heads = config.n_kv_heads,
                  .head_dim = config.head_dim,
                  .block_tokens = block_tokens,
                  .dtype = dtype};
}

KvBudget kv_budget(const KvLayout& layout, int64_t context_length, int64_t max_running,
                   int64_t host_cache_bytes, int64_t n_blocks) {
  const int64_t host_cap = std::max<int64_t>(
      1, (host_cache_bytes > 0 ? host_cache_bytes : kDefaultHostCacheCap) / layout.block_bytes());
  if (n_blocks > 0) {
    return KvBudget{.n_compute_blocks = n_blocks, .n_gpu_blocks = n_blocks,
                    .n_host_blocks = host_cache_bytes > 0 ? host_cap : 0};
  }
  const int64_t wanted = max_running * layout.blocks_for(context_length);
  return KvBudget{.n_compute_blocks = host_cache_bytes > 0 ? host_cap : std::min(wanted, host_cap),
                  .n_gpu_blocks = wanted,
                  .n_host_blocks = host_cap};
}

}  // namespace strata
