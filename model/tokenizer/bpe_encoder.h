// BpeEncoder: byte-level BPE (tokenizer.ggml.model "gpt2") over one
// pre-tokenized word. The word's bytes start as single-byte tokens; the
// adjacent pair with the lowest merge rank is merged until no pair has a rank
// (ties: leftmost), with a priority queue as in HF tokenizers' Word::merge_all.
// With ignore_merges (Llama 3), a word that is itself a token is emitted whole.
//
// Thread-safety: immutable after construction; encode_word() is re-entrant.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/tokenizer/vocab.h"

namespace strata {

class BpeEncoder {
 public:
  // Keeps views into `vocab`, which must outlive the encoder. Merges naming a
  // text that is not a token are skipped (llama.cpp loads such files too).
  BpeEncoder(const Vocab& vocab, bool ignore_merges);

  // `word` is raw bytes (not yet byte-level mapped).
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;

  // encode_word over each word, remembering each distinct word's tokens for
  // the length of the call: words repeat (the, of, spaces), and text is
  // mostly words already seen.
  void encode_words(const std::vector<std::string_view>& words, std::vector<TokenId>& out) const;

 private:
  struct Merge {
    int32_t rank;
    TokenId result;
  };
  static uint64_t pair_key(TokenId left, TokenId right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  bool ignore_merges_;
  std::unordered_map<std::string_view, TokenId> ids_;  // token text -> id (views into the vocab)
  std::unordered_map<uint64_t, Merge> merges_;         // pair_key(left, right) -> merge
  std::array<TokenId, 256> byte_ids_;  // byte -> token of its byte-level char, or -1
};

}  // namespace strata
