// KvLayout: where each layer's K and V live inside one KV block (DESIGN.md,
// "The KV block"). A block holds block_tokens consecutive tokens of one
// sequence for ALL layers, contiguous:
//
//   [layer][k|v][kv_head][token][head_dim]   elements of `dtype`
//
// so one kv head's keys for the block's tokens are one contiguous run of
// block_tokens * head_dim elements (what attention streams through), and a
// whole block is one transfer unit between tiers. Pure arithmetic; any thread.
// The engine builds a model's layout (engine/kv_sizing.h); kernels read it.
#pragma once

#include <cstdint>

#include "common/check.h"
#include "kernels/weight_type.h"

namespace strata {

enum class KvPart { kKey = 0, kValue = 1 };

struct KvLayout {
  static constexpr int64_t kDefaultBlockTokens = 16;

  int64_t n_layers = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t block_tokens = kDefaultBlockTokens;
  // kF16 (the default: half the bytes) or kF32 (exact, for reference checks).
  WeightType dtype = WeightType::kF16;

  int64_t elem_bytes() const { return dtype == WeightType::kF32 ? 4 : 2; }
  // One kv head's K (or V) for the block's tokens: [token][head_dim].
  int64_t head_bytes() const { return block_tokens * head_dim * elem_bytes(); }
  // All kv heads' K (or V) of one layer: [kv_head][token][head_dim].
  int64_t part_bytes() const { return n_kv_heads * head_bytes(); }
  int64_t layer_bytes() const { return 2 * part_bytes(); }
  int64_t block_bytes() const { return n_layers * layer_bytes(); }

  // Byte offset, from the block's start, of element [layer][part][kv_head][token][0].
  int64_t offset(int64_t layer, KvPart part, int64_t kv_head, int64_t token = 0) const {
    return layer * layer_bytes() + static_cast<int64_t>(part) * part_bytes() +
           kv_head * head_bytes() + token * head_dim * elem_bytes();
  }
  // Blocks needed to hold n_tokens tokens.
  int64_t blocks_for(int64_t n_tokens) const {
    return (n_tokens + block_tokens - 1) / block_tokens;
  }
};

}  // namespace strata
