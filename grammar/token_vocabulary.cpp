#include "grammar/token_vocabulary.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/str_cat.h"

namespace strata::grammar {

TokenVocabulary::TokenVocabulary(std::vector<VocabularyToken> tokens) : tokens_(std::move(tokens)) {
  if (tokens_.empty()) throw std::invalid_argument("token vocabulary: no tokens");
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (tokens_[id].kind == TokenKind::kEndOfSequence) end_tokens_.push_back(static_cast<TokenId>(id));
    if (tokens_[id].kind == TokenKind::kNormal && tokens_[id].bytes.size() > 0xFFFF) {
      throw std::invalid_argument(str_cat("token vocabulary: token ", id, " is longer than 65535 bytes"));
    }
  }
  build_trie();
}

// Sorted byte strings are already in preorder: each token adds the nodes for the bytes
// past its common prefix with the previous one.
void TokenVocabulary::build_trie() {
  std::vector<TokenId> sorted;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (tokens_[id].kind == TokenKind::kNormal && !tokens_[id].bytes.empty()) {
      sorted.push_back(static_cast<TokenId>(id));
    }
  }
  std::sort(sorted.begin(), sorted.end(), [&](TokenId a, TokenId b) {
    return tokens_[a].bytes < tokens_[b].bytes;  // std::string compares as unsigned char
  });
  std::vector<uint32_t> open;  // the nodes of the current path, by depth - 1
  std::string_view previous;
  for (TokenId id : sorted) {
    std::string_view bytes = tokens_[id].bytes;
    size_t common = 0;
    while (common < previous.size() && common < bytes.size() && previous[common] == bytes[common]) {
      ++common;
    }
    while (open.size() > common) {
      trie_[open.back()].subtree_end = static_cast<uint32_t>(trie_.size());
      open.pop_back();
    }
    for (size_t depth = common + 1; depth <= bytes.size(); ++depth) {
      open.push_back(static_cast<uint32_t>(trie_.size()));
      trie_.push_back(TrieNode{0, static_cast<uint32_t>(trie_tokens_.size()),
                               static_cast<uint16_t>(depth), static_cast<uint8_t>(bytes[depth - 1])});
    }
    trie_tokens_.push_back(id);
    previous = bytes;
  }
  while (!open.empty()) {
    trie_[open.back()].subtree_end = static_cast<uint32_t>(trie_.size());
    open.pop_back();
  }
  trie_.push_back(TrieNode{static_cast<uint32_t>(trie_.size() + 1),
                           static_cast<uint32_t>(trie_tokens_.size()), 0, 0});
}

}  // namespace strata::grammar
