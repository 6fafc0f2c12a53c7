// TokenMatcher: one sequence's constrained decoding. Each step the engine asks for the
// mask of tokens that keep the output inside the grammar, samples among them, and
// reports the token chosen:
//
//   matcher.fill_next_token_mask(mask);   // n_mask_words() words, n_vocab bits
//   token = sample(logits, mask);
//   matcher.accept_token(token);          // false: the token breaks the grammar
//
// A token may span several grammar symbols ("},{" closes an object, ends an element
// and opens the next). End-of-sequence tokens are allowed exactly when can_end(); once
// one is accepted the matcher is terminated and allows nothing.
//
// Owned by one sequence: one thread at a time (the engine's step thread). The cache
// behind it is shared.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "grammar/grammar_matcher.h"
#include "grammar/token_mask_cache.h"
#include "grammar/token_vocabulary.h"

namespace strata::grammar {

class TokenMatcher {
 public:
  explicit TokenMatcher(std::shared_ptr<TokenMaskCache> cache);

  size_t n_mask_words() const { return cache_->vocabulary().n_mask_words(); }
  // Writes the allowed tokens' bits into `mask` (n_mask_words() words; every bit is set
  // or cleared). Throws std::invalid_argument for a mask of the wrong size.
  void fill_next_token_mask(std::span<uint32_t> mask);

  // Takes `token` as the next output token; false, and the state unchanged, when the
  // mask would not have allowed it (or the id is outside the vocabulary).
  bool accept_token(TokenId token);
  // Undoes the last `n_tokens` accepted tokens (at most n_accepted()).
  void rollback(size_t n_tokens);
  size_t n_accepted() const { return bytes_.n_steps(); }

  // The output so far is a whole sentence: an end-of-sequence token is allowed.
  bool can_end() const { return !terminated_ && bytes_.can_end(); }
  // An end-of-sequence token was accepted: the output is finished.
  bool is_terminated() const { return terminated_; }

  // The byte-level state, e.g. for shortest_completion() when forcing an end.
  const GrammarMatcher& byte_matcher() const { return bytes_; }

 private:
  void add_uncertain(const TokenMaskEntry& entry, std::span<uint32_t> mask);

  std::shared_ptr<TokenMaskCache> cache_;
  GrammarMatcher bytes_;
  bool terminated_ = false;
};

}  // namespace strata::grammar
