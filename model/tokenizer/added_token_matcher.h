// AddedTokenMatcher: finds added tokens (<|im_start|>, <s>, <think>, ...) in raw
// text before anything else touches it, so normalization and pre-tokenization
// never split them. Matching is leftmost-longest, as Hugging Face's
// AddedVocabulary (aho-corasick, LeftmostLongest) does.
//
// Thread-safety: immutable after construction.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/tokenizer/vocab.h"

namespace strata {

struct TextFragment {
  std::string_view text;  // the matched token's text, or plain text to tokenize
  TokenId token = -1;     // >= 0: an added token; -1: plain text
};

class AddedTokenMatcher {
 public:
  // Which tokens are recognised in text.
  enum class Scope {
    kUserDefinedOnly,  // parse_special off: only non-special added tokens
    kAllAdded,         // parse_special on: control and unknown tokens too
  };

  AddedTokenMatcher(const Vocab& vocab, Scope scope);

  // Appends the fragments of `text` in order; concatenated they are `text`.
  // Adjacent plain text is one fragment; empty fragments are not emitted.
  void split(std::string_view text, std::vector<TextFragment>& fragments) const;

 private:
  // A byte trie over the token texts. Node 0 is the root.
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children;  // sorted by byte
    TokenId token = -1;                                       // a token ends here
  };
  int32_t child(int32_t node, unsigned char byte) const;
  void insert(std::string_view text, TokenId id);

  std::vector<Node> nodes_;
  std::array<bool, 256> is_first_byte_{};  // quick skip of bytes no token starts with
};

}  // namespace strata
