// TokenMaskCache: per (grammar, vocabulary), the part of each token mask that does not
// depend on the parse stacks' depth — the idea of xgrammar's adaptive token mask cache.
//
// A state's key is its stacks cut to their top `context_frames` frames. Walking the
// whole vocabulary trie from the cut stacks sorts every token into one of three sets:
//   accepted   some parse takes all its bytes without emptying a cut stack, or empties
//              one exactly at its last byte: allowed whatever lies below the cut;
//   rejected   every parse dies inside the cut frames: never allowed;
//   uncertain  the rest: a parse emptied a cut stack with bytes left over, so the frames
//              below decide. Only these are checked against the full stacks per step.
// Inside a JSON string, say, all but the tokens that close the string and go on are
// accepted, so a step costs a copy of the accepted bits plus a short uncertain list.
//
// Entries are built on first use (one trie walk each) and shared by every sequence
// using the grammar: entry() may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/parse_stack.h"
#include "grammar/token_vocabulary.h"

namespace strata::grammar {

struct TokenMaskEntry {
  std::vector<uint32_t> accepted;          // a mask (TokenVocabulary::n_mask_words words)
  std::vector<TokenId> uncertain;          // in trie order (bytewise sorted)
  std::vector<uint16_t> uncertain_common;  // [k]: bytes uncertain[k] shares with [k - 1]
};

struct TokenMaskCacheOptions {
  // Frames kept from the top of each stack in a key. More: fewer uncertain tokens but
  // fewer states sharing an entry. 4 reaches from a JSON string's characters up to the
  // string itself, so only tokens that close the string are uncertain.
  uint32_t context_frames = 4;
  // Entries kept; past this, masks are still right, built again on each use.
  size_t max_entries = 4096;
};

class TokenMaskCache {
 public:
  TokenMaskCache(std::shared_ptr<const Grammar> grammar,
                 std::shared_ptr<const TokenVocabulary> vocabulary,
                 TokenMaskCacheOptions options = {});

  const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }

  // The entry for the stacks `tops` of `stacks`.
  std::shared_ptr<const TokenMaskEntry> entry(const ParseStacks& stacks,
                                              std::span<const Frame> tops);

  size_t n_entries() const;

 private:
  std::string key(const ParseStacks& stacks, std::span<const Frame> tops,
                  std::vector<std::vector<uint32_t>>& cut) const;
  std::shared_ptr<const TokenMaskEntry> build(const std::vector<std::vector<uint32_t>>& cut) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  TokenMaskCacheOptions options_;
  mutable std::mutex mutex_;  // guards entries_
  std::unordered_map<std::string, std::shared_ptr<const TokenMaskEntry>> entries_;
};

}  // namespace strata::grammar
