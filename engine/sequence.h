// Sequence: one request inside the engine — its tokens (prompt, then
// generated), where its K/V live (block table), how far the model has run
// over it (n_computed), and its own sampler, text decoder and stop matcher.
//
// Preemption frees the blocks and sets n_computed back to the cached prefix;
// the tokens and the sampler's RNG state stay, so after recomputing prompt +
// generated tokens the sequence continues exactly where it was.
//
// Threads: created on a submitting thread, then used by the engine thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/generate_request.h"
#include "engine/sampler/sampler.h"
#include "engine/sampler/stop_matcher.h"
#include "model/tokenizer/stream_decoder.h"
#include "model/tokenizer/tokenizer.h"
#include "tiering/block_hash.h"
#include "tiering/block_pool.h"

namespace strata {

// Called on the engine thread; must not block (post to your own executor).
using EventCallback = std::function<void(const EngineEvent&)>;

enum class SequenceStatus { kWaiting, kRunning, kFinished };

struct Sequence {
  // `tokenizer` must outlive the sequence. `arrival` orders sequences of one
  // priority: smaller is older.
  Sequence(uint64_t id, uint64_t arrival, GenerateRequest request, EventCallback on_event,
           const Tokenizer& tokenizer);

  std::span<const TokenId> tokens() const { return tokens_; }  // prompt then generated
  std::span<const TokenId> prompt() const { return tokens().first(n_prompt()); }
  std::span<const TokenId> generated() const { return tokens().subspan(n_prompt()); }
  int64_t n_tokens() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t n_prompt() const { return static_cast<int64_t>(request.prompt.size()); }
  int64_t n_generated() const { return n_tokens() - n_prompt(); }
  int64_t n_uncomputed() const { return n_tokens() - n_computed; }  // >= 1 while not finished
  // Decoding: only the last sampled token is left to run.
  bool is_decoding() const { return n_uncomputed() == 1 && n_generated() > 0; }
  void append(TokenId id) { tokens_.push_back(id); }

  // Sort key: priority class first, then age. Running and waiting lists keep
  // this order; the last running sequence is the first preemption victim.
  bool runs_before(const Sequence& other) const {
    if (request.priority != other.request.priority)
      return request.priority < other.request.priority;
    return arrival < other.arrival;
  }

  const uint64_t id;
  const uint64_t arrival;
  const GenerateRequest request;
  const EventCallback on_event;

  // --- scheduling state (Scheduler) ---
  SequenceStatus status = SequenceStatus::kWaiting;
  int64_t n_computed = 0;  // leading tokens whose K/V the blocks hold
  // Blocks covering at least n_computed tokens, in token order; the first
  // n_computed / block_tokens may be shared with other sequences (cached).
  std::vector<BlockId> block_table;
  // block_hashes[i]: chained hash of tokens [i * bt, (i + 1) * bt), for every
  // full block of tokens() computed so far (extended lazily).
  std::vector<BlockHash> block_hashes;
  bool admitted_once = false;     // cached prompt tokens are counted at the first admission
  int64_t n_cached_prompt = 0;    // prompt tokens served from the prefix cache then
  int64_t n_preemptions = 0;
  int64_t last_scheduled_step = -1;

  // --- generation state (Engine) ---
  Sampler sampler;
  StreamDecoder decoder;
  StopMatcher stops;

 private:
  std::vector<TokenId> tokens_;  // prompt then generated
};

}  // namespace strata
