#include "model/tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

#include "common/check.h"
#include "common/str_cat.h"
#include "model/tokenizer/utf8.h"
#include "model/tokenizer/vocab.h"

namespace strata {

namespace {

// Llama 3's tokenizer.json Split regex: numbers in groups of up to 3 digits.
constexpr std::string_view kLlama3Regex =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// Qwen2's (and Qwen3's): the same, but every digit is its own word.
constexpr std::string_view kQwen2Regex =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// GPT-2's, built into HF's ByteLevel pre-tokenizer (use_regex: true).
constexpr std::string_view kGpt2Regex =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
// HF's Digits(individual_digits: true) pre-tokenizer, as a regex.
constexpr std::string_view kDigitsRegex = R"re(\p{N})re";

// Oniguruma's \s (doc/RE, Unicode case), as the inside of a PCRE2 class.
constexpr std::string_view kOnigurumaSpaceSet = R"re(\t\n\x{0B}\f\r\x{85}\p{Z})re";

}  // namespace

std::span<const PreTokenizerSpec> pre_tokenizer_specs() {
  static const std::array<PreTokenizerSpec, 4> kSpecs = {{
      {.name = "llama-bpe",
       .aliases = {"llama3", "llama-v3", "falcon3"},
       .hf_regexes = {kLlama3Regex},
       .nfc = false,
       .ignore_merges = true,
       .add_bos_default = true},
      {.name = "qwen2",
       .aliases = {"megrez"},
       .hf_regexes = {kQwen2Regex},
       .nfc = true,
       .ignore_merges = false,
       .add_bos_default = false},
      {.name = "gpt-2",
       // "default" is what older converters wrote for unrecognised BPE
       // tokenizers; GPT-2's split is the closest meaning it has.
       .aliases = {"default", "phi-2", "roberta-bpe", "mpt", "olmo", "jais"},
       .hf_regexes = {kGpt2Regex},
       .nfc = false,
       .ignore_merges = false,
       .add_bos_default = false},
      {.name = "smollm",
       .aliases = {"starcoder", "refact"},
       .hf_regexes = {kDigitsRegex, kGpt2Regex},
       .nfc = false,
       .ignore_merges = false,
       .add_bos_default = false},
  }};
  return kSpecs;
}

const PreTokenizerSpec* find_pre_tokenizer_spec(std::string_view name) {
  for (const PreTokenizerSpec& spec : pre_tokenizer_specs()) {
    if (spec.name == name) return &spec;
    for (std::string_view alias : spec.aliases) {
      if (alias == name) return &spec;
    }
  }
  return nullptr;
}

std::string pcre2_regex_from_hf(std::string_view hf_regex) {
  std::string out;
  out.reserve(hf_regex.size() * 2);
  bool in_class = false;
  size_t i = 0;
  while (i < hf_regex.size()) {
    const char c = hf_regex[i];
    if (c == '\\' && i + 1 < hf_regex.size()) {
      const char escaped = hf_regex[i + 1];
      if (escaped == 's') {
        out += in_class ? str_cat(kOnigurumaSpaceSet) : str_cat('[', kOnigurumaSpaceSet, ']');
      } else if (escaped == 'S') {
        // A negated set cannot be spliced into another class; none of the
        // supported patterns needs it.
        if (in_class) throw TokenizerError("regex: \\S inside a character class is unsupported");
        out += str_cat("[^", kOnigurumaSpaceSet, ']');
      } else {
        out += c;
        out += escaped;
      }
      i += 2;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      ++i;
      if (i < hf_regex.size() && hf_regex[i] == '^') out += hf_regex[i++];
      if (i < hf_regex.size() && hf_regex[i] == ']') out += hf_regex[i++];  // literal ]
      continue;
    }
    if (c == '[' && in_class) {
      throw TokenizerError("regex: nested character classes are unsupported");
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
    ++i;
  }
  return out;
}

struct PreTokenizer::CompiledRegex {
  pcre2_code* code = nullptr;
  ~CompiledRegex() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(const PreTokenizerSpec& spec) : spec_(spec) {
  for (std::string_view hf_regex : spec.hf_regexes) {
    const std::string pattern = pcre2_regex_from_hf(hf_regex);
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    auto regex = std::make_unique<CompiledRegex>();
    regex->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
    if (regex->code == nullptr) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(error_code, message.data(), message.size());
      throw TokenizerError(str_cat("pre-tokenizer '", spec.name, "': regex error at ", error_offset,
                                   ": ", reinterpret_cast<const char*>(message.data())));
    }
    // JIT makes splitting several times faster; without it (an unsupported
    // CPU) the interpreter gives the same matches.
    pcre2_jit_compile(regex->code, PCRE2_JIT_COMPLETE);
    regexes_.push_back(std::move(regex));
  }
}

PreTokenizer::~PreTokenizer() = default;

namespace {

// HF's Split with behavior Isolated: every match is a word, and so is every
// run of text between matches.
void split_isolated(pcre2_code* code, pcre2_match_data* match, std::string_view text,
                    std::vector<std::string_view>& words) {
  size_t previous_end = 0;
  size_t offset = 0;
  while (offset < text.size()) {
    // The text was validated once by the caller; re-checking it on every call
    // would make splitting quadratic.
    const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), offset,
                               PCRE2_NO_UTF_CHECK, match, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    STRATA_CHECK(rc > 0, "pcre2_match failed with ", rc);
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    const size_t start = ovector[0];
    const size_t end = ovector[1];
    if (end == start) {
      // Empty matches make no word (as Oniguruma's find_iter in HF); step
      // over one character.
      offset = start + utf8::sequence_length(static_cast<uint8_t>(text[start]));
      continue;
    }
    if (start > previous_end) words.push_back(text.substr(previous_end, start - previous_end));
    words.push_back(text.substr(start, end - start));
    previous_end = end;
    offset = end;
  }
  if (previous_end < text.size()) words.push_back(text.substr(previous_end));
}

}  // namespace

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& words) const {
  if (text.empty()) return;
  // Per call, so concurrent callers share nothing mutable.
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
  STRATA_CHECK(match != nullptr, "out of memory");

  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (size_t r = 0; r < regexes_.size(); ++r) {
    // The last step writes straight into the caller's vector.
    std::vector<std::string_view>& out = (r + 1 == regexes_.size()) ? words : next;
    for (std::string_view piece : current)
      split_isolated(regexes_[r]->code, match.get(), piece, out);
    if (&out == &next) {
      current.swap(next);
      next.clear();
    }
  }
}

}  // namespace strata
