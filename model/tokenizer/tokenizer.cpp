#include "model/tokenizer/tokenizer.h"

#include <algorithm>
#include <array>

#include "common/check.h"
#include "common/str_cat.h"
#include "model/gguf/gguf_file.h"
#include "model/tokenizer/bpe_encoder.h"
#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/nfc.h"
#include "model/tokenizer/pre_tokenizer.h"
#include "model/tokenizer/spm_encoder.h"
#include "model/tokenizer/stream_decoder.h"
#include "model/tokenizer/utf8.h"

namespace strata {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // "▁" U+2581

// Texts of tokens that end generation whatever the metadata says (llama.cpp's
// special_eog_ids list).
constexpr std::array<std::string_view, 7> kEndOfGenerationTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>",
};

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    const size_t found = text.find(from, pos);
    if (found == std::string_view::npos) break;
    out.append(text.substr(pos, found - pos)).append(to);
    pos = found + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

std::string bytes_of_token(const Vocab& vocab, size_t id) {
  const std::string& text = vocab.tokens[id];
  switch (vocab.types[id]) {
    case TokenType::kNormal:
      return vocab.model == TokenizerModel::kSentencePiece ? replace_all(text, kSpmSpace, " ")
                                                           : byte_level_decode(text);
    case TokenType::kByte:
      if (const std::optional<uint8_t> byte = byte_token_value(text)) {
        return std::string(1, static_cast<char>(*byte));
      }
      return vocab.model == TokenizerModel::kSentencePiece ? text : byte_level_decode(text);
    case TokenType::kUserDefined:
      return text;
    case TokenType::kControl:
    case TokenType::kUnknown:
    case TokenType::kUnused:
      return {};
  }
  return {};
}

void validate(const Vocab& vocab) {
  const size_t n = vocab.tokens.size();
  if (n == 0) throw TokenizerError("empty vocabulary");
  if (vocab.scores.size() != n || vocab.types.size() != n) {
    throw TokenizerError(str_cat("vocabulary arrays disagree: ", n, " tokens, ",
                                 vocab.scores.size(), " scores, ", vocab.types.size(), " types"));
  }
  for (std::optional<TokenId> id :
       {vocab.bos, vocab.eos, vocab.eot, vocab.eom, vocab.unk, vocab.pad}) {
    if (id && (*id < 0 || static_cast<size_t>(*id) >= n)) {
      throw TokenizerError(str_cat("special token id ", *id, " outside the vocabulary of ", n));
    }
  }
  if (vocab.add_bos && !vocab.bos) throw TokenizerError("add_bos without a BOS token");
  if (vocab.add_eos && !vocab.eos) throw TokenizerError("add_eos without an EOS token");
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const GgufFile& file) {
  return std::make_unique<Tokenizer>(read_vocab(file));
}

Tokenizer::Tokenizer(Vocab vocab)
    : vocab_((validate(vocab), std::move(vocab))),
      user_defined_matcher_(vocab_, AddedTokenMatcher::Scope::kUserDefinedOnly),
      all_added_matcher_(vocab_, AddedTokenMatcher::Scope::kAllAdded) {
  const size_t n = vocab_.tokens.size();
  token_bytes_.reserve(n);
  ids_by_text_.reserve(n);
  for (size_t id = 0; id < n; ++id) {
    token_bytes_.push_back(bytes_of_token(vocab_, id));
    ids_by_text_.try_emplace(std::string_view(vocab_.tokens[id]), static_cast<TokenId>(id));
  }

  for (std::optional<TokenId> id : {vocab_.eos, vocab_.eot, vocab_.eom}) {
    if (id) end_of_generation_.push_back(*id);
  }
  for (std::string_view text : kEndOfGenerationTexts) {
    if (const std::optional<TokenId> id = find_token(text)) end_of_generation_.push_back(*id);
  }
  std::sort(end_of_generation_.begin(), end_of_generation_.end());
  end_of_generation_.erase(std::unique(end_of_generation_.begin(), end_of_generation_.end()),
                           end_of_generation_.end());

  if (vocab_.model == TokenizerModel::kSentencePiece) {
    spm_ = std::make_unique<SpmEncoder>(vocab_);
  } else {
    const PreTokenizerSpec* spec = find_pre_tokenizer_spec(vocab_.pre);
    if (spec == nullptr) {
      std::string supported;
      for (const PreTokenizerSpec& s : pre_tokenizer_specs()) {
        supported += str_cat(supported.empty() ? "" : ", ", s.name);
      }
      throw TokenizerError(
          str_cat("unsupported pre-tokenizer '", vocab_.pre, "' (supported: ", supported, ")"));
    }
    pre_tokenizer_ = std::make_unique<PreTokenizer>(*spec);
    bpe_ = std::make_unique<BpeEncoder>(vocab_, spec->ignore_merges);
  }
}

Tokenizer::~Tokenizer() = default;

std::vector<TokenId> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  // PCRE2 and the per-character SPM symbols need valid UTF-8. Valid input
  // (everything from JSON) is not copied.
  std::string sanitized;
  if (!utf8::is_valid(text)) {
    sanitized = utf8::sanitize(text);
    text = sanitized;
  }

  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3 + 2);
  if (options.add_special && vocab_.add_bos) ids.push_back(*vocab_.bos);

  std::vector<TextFragment> fragments;
  (options.parse_special ? all_added_matcher_ : user_defined_matcher_).split(text, fragments);
  for (const TextFragment& fragment : fragments) {
    if (fragment.token >= 0) {
      ids.push_back(fragment.token);
    } else {
      encode_fragment(fragment.text, ids);
    }
  }

  if (options.add_special && vocab_.add_eos) ids.push_back(*vocab_.eos);
  return ids;
}

void Tokenizer::encode_fragment(std::string_view text, std::vector<TokenId>& out) const {
  if (spm_) {
    // HF's Prepend("▁") + Replace(" ", "▁") normalizer, run per fragment: text
    // after an added token gets its own "▁" (Llama 2's legacy behaviour, also
    // llama.cpp's).
    std::string normalized;
    normalized.reserve(text.size() + 16);
    if (vocab_.add_space_prefix) normalized.append(kSpmSpace);
    normalized.append(replace_all(text, " ", kSpmSpace));
    spm_->encode(normalized, out);
    return;
  }

  std::string normalized;
  if (pre_tokenizer_->spec().nfc) {
    normalized = to_nfc(text);
    text = normalized;
  }
  // HF's ByteLevel(add_prefix_space): a space before a fragment that lacks one.
  if (vocab_.add_space_prefix && !text.starts_with(' ')) {
    normalized = str_cat(' ', text);
    text = normalized;
  }
  std::vector<std::string_view> words;
  pre_tokenizer_->split(text, words);
  bpe_->encode_words(words, out);
}

std::string Tokenizer::decode(std::span<const TokenId> ids, const DecodeOptions& options) const {
  StreamDecoder decoder(*this, options);
  std::string text;
  for (TokenId id : ids) text += decoder.feed(id);
  text += decoder.flush();
  return text;
}

const std::string& Tokenizer::token_text(TokenId id) const {
  STRATA_CHECK(is_valid(id), "token id ", id, " outside the vocabulary of ", n_vocab());
  return vocab_.tokens[id];
}

TokenType Tokenizer::token_type(TokenId id) const {
  STRATA_CHECK(is_valid(id), "token id ", id, " outside the vocabulary of ", n_vocab());
  return vocab_.types[id];
}

const std::string& Tokenizer::token_bytes(TokenId id) const {
  STRATA_CHECK(is_valid(id), "token id ", id, " outside the vocabulary of ", n_vocab());
  return token_bytes_[id];
}

std::optional<TokenId> Tokenizer::find_token(std::string_view text) const {
  const auto it = ids_by_text_.find(text);
  if (it == ids_by_text_.end()) return std::nullopt;
  return it->second;
}

bool Tokenizer::is_end_of_generation(TokenId id) const {
  return std::binary_search(end_of_generation_.begin(), end_of_generation_.end(), id);
}

}  // namespace strata
