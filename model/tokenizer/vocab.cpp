#include "model/tokenizer/vocab.h"

#include <array>
#include <string_view>

#include "common/log.h"
#include "common/str_cat.h"
#include "model/gguf/gguf_file.h"
#include "model/tokenizer/pre_tokenizer.h"
#include "model/tokenizer/tokenizer_keys.h"

namespace strata {

namespace {

// Special ids are optional; an id outside the vocabulary is ignored with a
// warning, as llama.cpp does, rather than failing the whole model.
std::optional<TokenId> read_token_id(const GgufFile& file, const char* key, size_t n_tokens,
                                     std::optional<TokenId> fallback) {
  const GgufValue* value = file.find(key);
  if (value == nullptr) return fallback;
  const std::optional<int64_t> id = value->as_int();
  if (!id || *id < 0 || static_cast<uint64_t>(*id) >= n_tokens) {
    log_warning("tokenizer: ignoring ", key, " = ", value->describe(), " (vocabulary has ",
                n_tokens, " tokens)");
    return fallback;
  }
  return static_cast<TokenId>(*id);
}

bool read_flag(const GgufFile& file, const char* key, bool fallback) {
  return file.find_bool(key).value_or(fallback);
}

}  // namespace

std::optional<uint8_t> byte_token_value(std::string_view text) {
  if (text.size() != 6 || !text.starts_with("<0x") || text[5] != '>') return std::nullopt;
  int value = 0;
  for (char c : text.substr(3, 2)) {
    const int digit = (c >= '0' && c <= '9')   ? c - '0'
                      : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                      : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                               : -1;
    if (digit < 0) return std::nullopt;
    value = value * 16 + digit;
  }
  return static_cast<uint8_t>(value);
}

std::optional<TokenId> find_eot_by_text(const std::vector<std::string>& tokens) {
  // llama.cpp scans its (unordered) token map for these texts; we take them in
  // this order so a vocabulary holding several picks the chat-turn one.
  static constexpr std::array<std::string_view, 7> kEotTexts = {
      "<|eot_id|>",
      "<|im_end|>",
      "<|end|>",
      "<end_of_turn>",
      "<|endoftext|>",
      "<EOT>",
      "<\xEF\xBD\x9C"
      "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
  };
  for (std::string_view text : kEotTexts) {
    for (size_t id = 0; id < tokens.size(); ++id) {
      if (tokens[id] == text) return static_cast<TokenId>(id);
    }
  }
  return std::nullopt;
}

Vocab read_vocab(const GgufFile& file) {
  Vocab vocab;

  const std::string* model = file.find_string(tokenizer_keys::kModel);
  if (model == nullptr) {
    throw TokenizerError(str_cat("model has no tokenizer (", tokenizer_keys::kModel, " missing)"));
  }
  if (*model == "llama") {
    vocab.model = TokenizerModel::kSentencePiece;
  } else if (*model == "gpt2") {
    vocab.model = TokenizerModel::kByteLevelBpe;
  } else {
    throw TokenizerError(
        str_cat("unsupported tokenizer model '", *model, "' (supported: llama, gpt2)"));
  }
  if (const std::string* pre = file.find_string(tokenizer_keys::kPre)) vocab.pre = *pre;

  const GgufValue* tokens = file.find(tokenizer_keys::kTokens);
  std::optional<std::vector<std::string>> token_texts =
      tokens ? tokens->as_string_array() : std::nullopt;
  if (!token_texts || token_texts->empty()) {
    throw TokenizerError(str_cat(tokenizer_keys::kTokens, " missing, empty or not strings"));
  }
  vocab.tokens = std::move(*token_texts);
  const size_t n_tokens = vocab.tokens.size();

  if (const GgufValue* scores = file.find(tokenizer_keys::kScores)) {
    std::optional<std::vector<float>> values = scores->as_f32_array();
    if (!values || values->size() != n_tokens) {
      throw TokenizerError(str_cat(tokenizer_keys::kScores, " must hold ", n_tokens, " floats"));
    }
    vocab.scores = std::move(*values);
  } else {
    vocab.scores.assign(n_tokens, 0.0f);
  }

  vocab.types.assign(n_tokens, TokenType::kNormal);
  if (const GgufValue* types = file.find(tokenizer_keys::kTokenTypes)) {
    std::optional<std::vector<int32_t>> values = types->as_i32_array();
    if (!values || values->size() != n_tokens) {
      throw TokenizerError(
          str_cat(tokenizer_keys::kTokenTypes, " must hold ", n_tokens, " integers"));
    }
    for (size_t id = 0; id < n_tokens; ++id) {
      const int32_t type = (*values)[id];
      // Unknown numbers (0 = undefined) read as normal, as llama.cpp's loader
      // treats them as plain text.
      vocab.types[id] =
          (type >= 1 && type <= 6) ? static_cast<TokenType>(type) : TokenType::kNormal;
    }
  }

  if (vocab.model == TokenizerModel::kByteLevelBpe) {
    const GgufValue* merges = file.find(tokenizer_keys::kMerges);
    std::optional<std::vector<std::string>> values =
        merges ? merges->as_string_array() : std::nullopt;
    if (!values) {
      throw TokenizerError(str_cat("gpt2 tokenizer needs ", tokenizer_keys::kMerges));
    }
    vocab.merges = std::move(*values);
  }

  // Defaults are llama.cpp's for each model type, so files that omit a key
  // behave as they do there.
  const bool is_spm = vocab.model == TokenizerModel::kSentencePiece;
  const PreTokenizerSpec* pre_spec = is_spm ? nullptr : find_pre_tokenizer_spec(vocab.pre);
  const auto default_id = [&](TokenId id) -> std::optional<TokenId> {
    if (!is_spm || static_cast<size_t>(id) >= n_tokens) return std::nullopt;
    return id;
  };
  vocab.bos = read_token_id(file, tokenizer_keys::kBosId, n_tokens, default_id(1));
  vocab.eos = read_token_id(file, tokenizer_keys::kEosId, n_tokens, default_id(2));
  vocab.unk = read_token_id(file, tokenizer_keys::kUnknownId, n_tokens, default_id(0));
  vocab.pad = read_token_id(file, tokenizer_keys::kPaddingId, n_tokens, std::nullopt);
  vocab.eot = read_token_id(file, tokenizer_keys::kEotId, n_tokens, std::nullopt);
  vocab.eom = read_token_id(file, tokenizer_keys::kEomId, n_tokens, std::nullopt);
  if (!vocab.eot) vocab.eot = find_eot_by_text(vocab.tokens);
  if (!vocab.eom) {
    for (size_t id = 0; id < n_tokens; ++id) {
      if (vocab.tokens[id] == "<|eom_id|>") vocab.eom = static_cast<TokenId>(id);
    }
  }

  vocab.add_bos = read_flag(file, tokenizer_keys::kAddBos,
                            is_spm || (pre_spec != nullptr && pre_spec->add_bos_default));
  vocab.add_eos = read_flag(file, tokenizer_keys::kAddEos, false);
  vocab.add_space_prefix = read_flag(file, tokenizer_keys::kAddSpacePrefix, is_spm);
  // A flag without its token cannot be honoured; llama.cpp would assert on
  // the first encode. Serve the model without it instead.
  if (vocab.add_bos && !vocab.bos) {
    log_warning("tokenizer: add_bos_token set but no BOS token; not adding one");
    vocab.add_bos = false;
  }
  if (vocab.add_eos && !vocab.eos) {
    log_warning("tokenizer: add_eos_token set but no EOS token; not adding one");
    vocab.add_eos = false;
  }
  return vocab;
}

}  // namespace strata
