// SpmEncoder: SentencePiece-style BPE (tokenizer.ggml.model "llama"). Starts
// from single characters and repeatedly merges the adjacent pair whose joined
// text is the normal token with the highest score (leftmost on ties);
// characters that end up in no token fall back to <0xNN> byte tokens.
//
// With scores derived from a Hugging Face merge list (score = -rank, as the
// importer writes them) this reproduces HF's BPE with byte_fallback exactly when
// the merge list holds every split of every token, which is how HF converts
// SentencePiece models.
//
// Thread-safety: immutable after construction; encode() is re-entrant.
#pragma once

#include <array>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/tokenizer/vocab.h"

namespace strata {

class SpmEncoder {
 public:
  // Keeps a reference to `vocab`, which must outlive the encoder.
  explicit SpmEncoder(const Vocab& vocab);

  // `text` is already normalized: spaces escaped as "▁", prefix added.
  void encode(std::string_view text, std::vector<TokenId>& out) const;

 private:
  const Vocab& vocab_;
  // Normal tokens only: merges never produce control, byte or added tokens.
  std::unordered_map<std::string_view, TokenId> normal_ids_;  // views into vocab_.tokens
  std::array<TokenId, 256> byte_ids_;  // byte -> its <0xNN> token, -1 if the vocabulary lacks it
};

}  // namespace strata
