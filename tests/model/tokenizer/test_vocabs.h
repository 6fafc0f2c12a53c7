// Small hand-built vocabularies for the tokenizer unit tests: every expected id
// can be worked out by hand.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/vocab.h"

namespace strata::test {

inline TokenId add_token(Vocab& vocab, const std::string& text, TokenType type = TokenType::kNormal,
                         float score = 0.0f) {
  vocab.tokens.push_back(text);
  vocab.types.push_back(type);
  vocab.scores.push_back(score);
  return static_cast<TokenId>(vocab.tokens.size() - 1);
}

// SentencePiece-style: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>, then
// the caller's pieces. Spaces are "▁".
inline Vocab spm_vocab() {
  Vocab vocab;
  vocab.model = TokenizerModel::kSentencePiece;
  vocab.unk = add_token(vocab, "<unk>", TokenType::kUnknown);
  vocab.bos = add_token(vocab, "<s>", TokenType::kControl);
  vocab.eos = add_token(vocab, "</s>", TokenType::kControl);
  for (int byte = 0; byte < 256; ++byte) {
    char text[8];
    std::snprintf(text, sizeof(text), "<0x%02X>", byte);
    add_token(vocab, text, TokenType::kByte);
  }
  vocab.add_bos = true;
  vocab.add_space_prefix = true;
  return vocab;
}

inline TokenId spm_byte(int byte) { return 3 + byte; }

// Byte-level BPE: ids 0..255 are the single bytes (byte-level chars), then the
// caller's tokens and merges.
inline Vocab bpe_vocab(const std::string& pre) {
  Vocab vocab;
  vocab.model = TokenizerModel::kByteLevelBpe;
  vocab.pre = pre;
  for (int byte = 0; byte < 256; ++byte) {
    add_token(vocab, byte_level_encode(std::string(1, static_cast<char>(byte))));
  }
  return vocab;
}

// Adds the merge "left right" (byte-level text) and its result token.
inline TokenId add_merge(Vocab& vocab, const std::string& left, const std::string& right) {
  vocab.merges.push_back(left + " " + right);
  return add_token(vocab, left + right);
}

}  // namespace strata::test
