// Tokenizer: text <-> token ids for one model, built from its GGUF metadata.
// Encoding matches Hugging Face tokenizers for the supported families:
// SentencePiece-style BPE with byte fallback ("llama": Llama 2, Mistral,
// TinyLlama) and byte-level BPE ("gpt2": Llama 3, Qwen2/Qwen3, GPT-2, SmolLM).
//
//   encode: added tokens are cut out of the raw text (AddedTokenMatcher); each
//   remaining fragment is normalized and split (SPM: "▁" prefix and spaces;
//   BPE: NFC where the family has it, then the regex pre-tokenizer) and merged
//   (SpmEncoder / BpeEncoder); BOS/EOS are added as the model's flags say.
//
// Thread-safety: immutable after construction; every const method may be
// called from any number of threads at once (Asio threads tokenize requests).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/tokenizer/added_token_matcher.h"
#include "model/tokenizer/vocab.h"

namespace strata {

class GgufFile;
class SpmEncoder;
class BpeEncoder;
class PreTokenizer;

struct EncodeOptions {
  // Add the model's BOS/EOS (Vocab::add_bos / add_eos), as HF's
  // add_special_tokens=True does.
  bool add_special = true;
  // Control tokens written in the text (<|im_start|>, <s>) become those
  // tokens. Off, they are tokenized as plain text, as HF's
  // split_special_tokens=True does; user-defined added tokens (<think>) are
  // recognised either way. Turn on only for trusted text (chat templates), never
  // for user content.
  bool parse_special = false;
};

struct DecodeOptions {
  // Control and unknown tokens as their text ("<|im_end|>"); off, they add
  // nothing.
  bool render_special = false;
  // Drop one space at the very start: SentencePiece's prefix space (HF's
  // Strip decoder). Only for decoding a whole text from its first token.
  bool strip_leading_space = false;
};

class Tokenizer {
 public:
  // Throws TokenizerError when the metadata is missing, malformed or of an
  // unsupported model / pre-tokenizer.
  static std::unique_ptr<Tokenizer> from_gguf(const GgufFile& file);
  explicit Tokenizer(Vocab vocab);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // `text` may hold any bytes: invalid UTF-8 is replaced by U+FFFD first.
  std::vector<TokenId> encode(std::string_view text, const EncodeOptions& options = {}) const;

  // Whole-sequence decode: the stream decoder fed every id, then flushed.
  std::string decode(std::span<const TokenId> ids, const DecodeOptions& options = {}) const;

  int32_t n_vocab() const { return static_cast<int32_t>(vocab_.tokens.size()); }
  bool is_valid(TokenId id) const { return id >= 0 && id < n_vocab(); }

  // Per-token lookups; `id` must be valid (check untrusted ids with is_valid).
  const std::string& token_text(TokenId id) const;  // as stored in the vocabulary
  TokenType token_type(TokenId id) const;
  // The bytes the token stands for in text: "▁" -> " " (SPM), <0xNN> -> the
  // byte, byte-level chars -> their bytes (BPE), added tokens -> their text.
  // Control, unknown and unused tokens -> empty. May be part of a UTF-8
  // character: stream through StreamDecoder to get whole characters.
  const std::string& token_bytes(TokenId id) const;

  // The id of a token by its stored text, e.g. find_token("<|im_start|>").
  std::optional<TokenId> find_token(std::string_view text) const;

  std::optional<TokenId> bos() const { return vocab_.bos; }
  std::optional<TokenId> eos() const { return vocab_.eos; }
  std::optional<TokenId> eot() const { return vocab_.eot; }
  std::optional<TokenId> unk() const { return vocab_.unk; }
  std::optional<TokenId> pad() const { return vocab_.pad; }
  // Generation stops here: eos, eot, eom, and the end tokens llama.cpp
  // recognises by text (<|endoftext|>, <|im_end|>, <|eot_id|>, ...).
  bool is_end_of_generation(TokenId id) const;

  const Vocab& vocab() const { return vocab_; }

 private:
  void encode_fragment(std::string_view text, std::vector<TokenId>& out) const;

  Vocab vocab_;
  std::vector<std::string> token_bytes_;                       // id -> bytes (see token_bytes)
  std::unordered_map<std::string_view, TokenId> ids_by_text_;  // views into vocab_.tokens
  std::vector<TokenId> end_of_generation_;                     // sorted
  AddedTokenMatcher user_defined_matcher_;                     // parse_special off
  AddedTokenMatcher all_added_matcher_;                        // parse_special on
  std::unique_ptr<SpmEncoder> spm_;                            // set for kSentencePiece
  std::unique_ptr<PreTokenizer> pre_tokenizer_;                // set for kByteLevelBpe
  std::unique_ptr<BpeEncoder> bpe_;                            // set for kByteLevelBpe
};

}  // namespace strata
