// Backend: what the scheduler drives each step — one batched forward pass
// over a list of sequences, each with its new tokens and its block table. The
// pass appends the new tokens' K and V into the sequences' KV blocks and
// returns logits where the sampler needs them. Implementations: CpuBackend
// (engine/cpu/) and CudaBackend (engine/cuda/).
//
// Threads: the engine thread only; forward() is not reentrant.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampler/sampler.h"
#include "kernels/kv_layout.h"
#include "kernels/sampling/token_choice.h"
#include "model/model_config.h"
#include "tiering/block_pool.h"

namespace strata {

// One sequence's share of a step.
struct BatchSequence {
  std::span<const int32_t> tokens = {};  // new tokens (>= 1), at positions n_past, n_past + 1, ...
  int64_t n_past = 0;                    // tokens whose K/V its blocks already hold
  // Block ids covering at least n_past + tokens.size() tokens, in token order
  // (block i holds positions [i * block_tokens, (i + 1) * block_tokens)).
  // Blocks that will receive new tokens must be private to this sequence;
  // earlier (full, shared) blocks are only read.
  std::span<const BlockId> block_table = {};
  bool all_logits = false;  // logits for every new token (e.g. prompt logprobs); else the last
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const ModelConfig& config() const = 0;
  virtual const KvLayout& kv_layout() const = 0;

  // Runs the new tokens of every sequence in `batch` through the model,
  // writing their K/V into the blocks. logits is resized to rows of
  // config().n_vocab floats: per sequence in batch order, tokens.size() rows
  // if all_logits, else one row (its last token). Token ids must be in
  // [0, n_vocab) and the block tables valid (both checked; the scheduler
  // validates requests before they get here).
  virtual void forward(std::span<const BatchSequence> batch, std::vector<float>& logits) = 0;

  // Backends that choose tokens where the logits live (the GPU's) say so:
  // the engine then calls forward_and_choose, and no logits cross the bus.
  virtual bool chooses_tokens() const { return false; }

  // forward(), then chosen[i] = the token choices[i] picks from the last row
  // of sequence choices[i].batch_index (all_logits must be false), as
  // Sampler::sample would pick it from those logits. Throws on logits
  // Sampler::sample refuses (NaN, no finite value). Only where
  // chooses_tokens().
  virtual void forward_and_choose(std::span<const BatchSequence> batch,
                                  std::span<const TokenChoice> choices,
                                  std::vector<SampledToken>& chosen);
};

}  // namespace strata
