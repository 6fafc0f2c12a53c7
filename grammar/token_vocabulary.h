// TokenVocabulary: a model's tokens as byte strings, prepared once per model for the
// token masks: the normal tokens in a byte trie laid out in preorder, so a walk skips a
// rejected prefix's whole subtree by jumping to its end.
//
// Special tokens (control tokens such as <|im_start|>) are never allowed by a mask; the
// end-of-sequence tokens are allowed exactly when the grammar may end. A normal token
// with no bytes is never allowed either (it would let an output grow without end).
//
// Immutable after construction: any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::grammar {

using TokenId = int32_t;

enum class TokenKind : uint8_t {
  kNormal,         // text: allowed when its bytes fit the grammar
  kSpecial,        // a control token: never allowed
  kEndOfSequence,  // allowed when the grammar may end here
};

struct VocabularyToken {
  std::string bytes;  // what the token stands for (byte-level BPE: decoded to raw bytes)
  TokenKind kind = TokenKind::kNormal;
};

// One node of the trie: the token prefix of `depth` bytes ending in `byte`.
struct TrieNode {
  uint32_t subtree_end = 0;   // index of the first node after this node's subtree
  uint32_t tokens_begin = 0;  // this node's tokens: trie_tokens()[tokens_begin, next node's)
  uint16_t depth = 0;         // bytes from the root, >= 1
  uint8_t byte = 0;
};

class TokenVocabulary {
 public:
  // Token i of `tokens` has id i. Throws std::invalid_argument for an empty vocabulary
  // or a normal token longer than 65535 bytes.
  explicit TokenVocabulary(std::vector<VocabularyToken> tokens);

  size_t n_tokens() const { return tokens_.size(); }
  // 32-bit words in a mask: bit (id % 32) of word (id / 32) allows token id.
  size_t n_mask_words() const { return (tokens_.size() + 31) / 32; }
  std::string_view token_bytes(TokenId id) const { return tokens_[id].bytes; }
  TokenKind token_kind(TokenId id) const { return tokens_[id].kind; }
  std::span<const TokenId> end_tokens() const { return end_tokens_; }

  // The trie in preorder, then one sentinel node (whose tokens_begin is the total).
  std::span<const TrieNode> trie() const { return trie_; }
  // Tokens in trie order (bytewise sorted); a subtree's are contiguous:
  // [trie()[i].tokens_begin, trie()[trie()[i].subtree_end].tokens_begin).
  std::span<const TokenId> trie_tokens() const { return trie_tokens_; }
  size_t n_trie_nodes() const { return trie_.size() - 1; }

 private:
  void build_trie();

  std::vector<VocabularyToken> tokens_;
  std::vector<TokenId> end_tokens_;
  std::vector<TrieNode> trie_;
  std::vector<TokenId> trie_tokens_;
};

}  // namespace strata::grammar
