// Vocab: everything a tokenizer needs from a model file, as plain data. Read
// from GGUF metadata by read_vocab(); unit tests build one by hand.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

class GgufFile;

using TokenId = int32_t;

// A tokenizer that cannot be built from its metadata (unsupported model or
// pre-tokenizer, missing or inconsistent arrays). An expected failure of a
// bad file, so an exception at the API boundary, not a check.
class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// GGUF's tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  kNormal = 1,       // ordinary text piece; BPE merges produce only these
  kUnknown = 2,      // <unk>
  kControl = 3,      // special token (<s>, <|im_end|>): matched in text only with parse_special
  kUserDefined = 4,  // added non-special token (<think>): always matched in text
  kUnused = 5,       // padding slot of the vocabulary; never produced
  kByte = 6,         // <0xNN>: SentencePiece byte fallback
};

enum class TokenizerModel {
  kSentencePiece,  // tokenizer.ggml.model "llama"
  kByteLevelBpe,   // tokenizer.ggml.model "gpt2"
};

struct Vocab {
  TokenizerModel model = TokenizerModel::kSentencePiece;
  std::string pre;  // tokenizer.ggml.pre; only byte-level BPE uses it

  // Indexed by token id; all three have tokens.size() entries.
  std::vector<std::string> tokens;  // text as stored: "▁" for spaces (SPM), GPT-2 byte chars (BPE)
  std::vector<float> scores;        // SentencePiece merge priority: higher merges first
  std::vector<TokenType> types;

  // Byte-level BPE merges "left right", in rank order (index = rank).
  std::vector<std::string> merges;

  std::optional<TokenId> bos;
  std::optional<TokenId> eos;
  std::optional<TokenId> eot;  // end of turn: <|eot_id|>, <|im_end|>, ...
  std::optional<TokenId> eom;  // end of message (Llama 3.1 tool calls): <|eom_id|>
  std::optional<TokenId> unk;
  std::optional<TokenId> pad;

  bool add_bos = false;           // encode(add_special) prepends bos
  bool add_eos = false;           // encode(add_special) appends eos
  bool add_space_prefix = false;  // SPM: "▁" before each text fragment (HF's Prepend normalizer)
};

// Reads the tokenizer.ggml.* keys (tokenizer_keys.h). Missing optional keys take
// llama.cpp's defaults for the model type; the end-of-turn token, when no key
// names it, is found by its text as llama.cpp does. Throws TokenizerError.
Vocab read_vocab(const GgufFile& file);

// The byte a SentencePiece byte token stands for: "<0x0A>" -> 0x0A; nullopt
// for any other text.
std::optional<uint8_t> byte_token_value(std::string_view text);

// The end-of-turn token by text, in llama.cpp's order of preference.
std::optional<TokenId> find_eot_by_text(const std::vector<std::string>& tokens);

}  // namespace strata
