#include "engine/cpu/token_batch.h"

#include <algorithm>

#include "common/check.h"

namespace strata {

TokenBatch flatten_batch(std::span<const BatchSequence> batch, int64_t n_vocab,
                         const KvLayout& layout, const BlockPool& kv_blocks) {
  TokenBatch flat;
  std::vector<BlockId> written;  // blocks receiving new K/V this step, over all sequences
  for (size_t s = 0; s < batch.size(); ++s) {
    const BatchSequence& seq = batch[s];
    const int64_t n_new = static_cast<int64_t>(seq.tokens.size());
    STRATA_CHECK(n_new >= 1 && seq.n_past >= 0, "sequence ", s, ": ", n_new, " new tokens after ",
                 seq.n_past);
    const int64_t n_blocks = layout.blocks_for(seq.n_past + n_new);
    STRATA_CHECK(static_cast<int64_t>(seq.block_table.size()) >= n_blocks, "sequence ", s,
                 ": block table of ", seq.block_table.size(), " blocks for ", seq.n_past + n_new,
                 " tokens");
    TokenBatch::Sequence& out = flat.sequences.emplace_back();
    out.first_row = flat.n_rows();
    out.n_rows = n_new;
    out.n_past = seq.n_past;
    out.blocks = seq.block_table.first(static_cast<size_t>(n_blocks));
    for (BlockId id : out.blocks) {
      STRATA_CHECK(kv_blocks.is_allocated(id), "sequence ", s, " uses free block ", id);
    }
    for (int64_t b = seq.n_past / layout.block_tokens; b < n_blocks; ++b) {
      written.push_back(out.blocks[static_cast<size_t>(b)]);
    }

    for (int64_t i = 0; i < n_new; ++i) {
      const int32_t token = seq.tokens[static_cast<size_t>(i)];
      STRATA_CHECK(token >= 0 && token < n_vocab, "sequence ", s, ": token ", token,
                   " outside [0, ", n_vocab, ")");
      flat.tokens.push_back(token);
      flat.positions.push_back(seq.n_past + i);
    }
    const int64_t first_logit = seq.all_logits ? 0 : n_new - 1;
    for (int64_t i = first_logit; i < n_new; ++i) flat.logit_rows.push_back(out.first_row + i);
  }
  std::sort(written.begin(), written.end());
  STRATA_CHECK(std::adjacent_find(written.begin(), written.end()) == written.end(),
               "two sequences of one batch write the same KV block");
  return flat;
}

}  // namespace strata
