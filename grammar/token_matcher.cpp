#include "grammar/token_matcher.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/str_cat.h"
#include "grammar/walk_levels.h"

namespace strata::grammar {
namespace {

void set_bit(std::span<uint32_t> mask, TokenId id) {
  mask[static_cast<size_t>(id) / 32] |= uint32_t{1} << (id % 32);
}

}  // namespace

TokenMatcher::TokenMatcher(std::shared_ptr<TokenMaskCache> cache)
    : cache_(std::move(cache)), bytes_(cache_->grammar()) {}

void TokenMatcher::fill_next_token_mask(std::span<uint32_t> mask) {
  if (mask.size() != n_mask_words()) {
    throw std::invalid_argument(str_cat("token mask: ", mask.size(), " words given, ",
                                        n_mask_words(), " needed"));
  }
  std::fill(mask.begin(), mask.end(), 0);
  if (terminated_) return;
  std::shared_ptr<const TokenMaskEntry> entry = cache_->entry(bytes_.stacks(), bytes_.tops());
  std::copy(entry->accepted.begin(), entry->accepted.end(), mask.begin());
  add_uncertain(*entry, mask);
  if (bytes_.can_end()) {
    for (TokenId id : cache_->vocabulary().end_tokens()) set_bit(mask, id);
  }
}

// Checks the entry's uncertain tokens against the full stacks, in trie order: a token
// resumes from the levels it shares with the one before, and tokens that share a prefix
// already found dead are skipped without a step.
void TokenMatcher::add_uncertain(const TokenMaskEntry& entry, std::span<uint32_t> mask) {
  const TokenVocabulary& vocabulary = cache_->vocabulary();
  WalkLevels levels(bytes_.stacks(), bytes_.tops());
  size_t valid_depth = 0;            // levels 1..valid_depth hold the previous token's prefix
  size_t dead_depth = SIZE_MAX;      // the previous token's prefix of this length is dead
  for (size_t k = 0; k < entry.uncertain.size(); ++k) {
    size_t common = entry.uncertain_common[k];
    if (dead_depth <= common) continue;
    TokenId id = entry.uncertain[k];
    std::string_view token = vocabulary.token_bytes(id);
    dead_depth = SIZE_MAX;
    bool accepted = true;
    for (size_t depth = std::min(common, valid_depth) + 1; depth <= token.size(); ++depth) {
      WalkLevels::Step step = levels.descend(depth, static_cast<uint8_t>(token[depth - 1]));
      valid_depth = depth;
      if (!step.live && !(step.finished && depth == token.size())) {
        dead_depth = depth;
        accepted = false;
        break;
      }
    }
    if (accepted) set_bit(mask, id);
  }
}

bool TokenMatcher::accept_token(TokenId token) {
  const TokenVocabulary& vocabulary = cache_->vocabulary();
  if (terminated_ || token < 0 || static_cast<size_t>(token) >= vocabulary.n_tokens()) return false;
  switch (vocabulary.token_kind(token)) {
    case TokenKind::kSpecial:
      return false;
    case TokenKind::kEndOfSequence:
      if (!bytes_.can_end()) return false;
      bytes_.accept_bytes({});
      terminated_ = true;
      return true;
    case TokenKind::kNormal:
      break;
  }
  std::string_view text = vocabulary.token_bytes(token);
  return !text.empty() && bytes_.accept_bytes(text);
}

void TokenMatcher::rollback(size_t n_tokens) {
  if (n_tokens > 0) terminated_ = false;
  bytes_.rollback(n_tokens);
}

}  // namespace strata::grammar
