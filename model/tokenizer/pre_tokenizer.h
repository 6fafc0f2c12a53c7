// PreTokenizer: splits the text of a byte-level BPE model into the words BPE
// runs on, exactly as the Hugging Face pre-tokenizer of that model family does
// (a Sequence of Split(regex, Isolated) steps, with an NFC normalizer first for
// some). GGUF names the family in tokenizer.ggml.pre; the table of families is
// here so the importer detects them from the same regexes the encoder runs.
//
// Thread-safety: a built PreTokenizer is immutable; split() may run on any
// number of threads at once.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct PreTokenizerSpec {
  std::string_view name;                  // canonical tokenizer.ggml.pre, written by the importer
  std::vector<std::string_view> aliases;  // other names llama.cpp accepts for it
  // Regexes as tokenizer.json spells them (Oniguruma syntax), applied in order:
  // each one splits the pieces the previous one produced.
  std::vector<std::string_view> hf_regexes;
  bool nfc = false;              // normalizer NFC runs before splitting
  bool ignore_merges = false;    // BPE: a word that is itself a token is not merged
  bool add_bos_default = false;  // llama.cpp's add_bos when the file has no key
};

// All supported families, for the importer's detection.
std::span<const PreTokenizerSpec> pre_tokenizer_specs();
// By canonical name or alias; nullptr when unsupported.
const PreTokenizerSpec* find_pre_tokenizer_spec(std::string_view name);

// Oniguruma regex (tokenizer.json) -> PCRE2 regex with the same meaning. The
// one difference that matters for these patterns is \s: Oniguruma's is
// [\t\n\v\f\r\x85] plus the Z categories, PCRE2's (with UCP) also has U+180E.
// Exposed for tests.
std::string pcre2_regex_from_hf(std::string_view hf_regex);

class PreTokenizer {
 public:
  // Compiles (and JIT-compiles) the spec's regexes. Throws TokenizerError.
  explicit PreTokenizer(const PreTokenizerSpec& spec);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  const PreTokenizerSpec& spec() const { return spec_; }

  // Appends the words of `text` (valid UTF-8, already normalized) as views into
  // it. Concatenated, the words are `text`.
  void split(std::string_view text, std::vector<std::string_view>& words) const;

 private:
  struct CompiledRegex;
  const PreTokenizerSpec& spec_;  // points into the static table
  std::vector<std::unique_ptr<CompiledRegex>> regexes_;
};

}  // namespace strata
