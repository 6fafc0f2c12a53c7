// TokenBatch: a step's batch flattened for the matmuls. Every new token of
// every sequence becomes one row of the activation matrices, sequences in
// batch order, so one weight read serves the whole batch.
//
// Building it validates the batch against the KV layout and the block pool:
// tokens in range, block tables long enough, every block allocated, and no
// block written by two sequences in one step (each a check failure: the
// scheduler builds batches, so a bad one is a bug).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend.h"
#include "kernels/kv_layout.h"
#include "tiering/block_pool.h"

namespace strata {

struct TokenBatch {
  struct Sequence {
    int64_t first_row = 0;                 // its first new token's row
    int64_t n_rows = 0;                    // its new tokens (>= 1)
    int64_t n_past = 0;                    // position of its first new token
    std::span<const BlockId> blocks = {};  // exactly the blocks covering n_past + n_rows tokens
  };

  std::vector<int32_t> tokens;      // [n_rows] token id of each row
  std::vector<int64_t> positions;   // [n_rows] absolute position of each row's token
  std::vector<Sequence> sequences;  // batch order
  std::vector<int64_t> logit_rows;  // rows whose logits forward() returns, in output order

  int64_t n_rows() const { return static_cast<int64_t>(tokens.size()); }
};

TokenBatch flatten_batch(std::span<const BatchSequence> batch, int64_t n_vocab,
                         const KvLayout& layout, const BlockPool& kv_blocks);

}  // namespace strata
