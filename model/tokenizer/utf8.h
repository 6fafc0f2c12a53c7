// UTF-8 helpers for the tokenizer: the encoder needs valid UTF-8 (PCRE2 and the
// code-point BPE require it) and the stream decoder must never emit half a
// character. Invalid input is replaced per "maximal subpart" (Unicode 15
// §3.9, U+FFFD substitution of maximal subparts), as browsers and Python do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::utf8 {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

enum class SequenceStatus {
  kComplete,    // n_bytes form one valid character
  kIncomplete,  // the input ends inside a sequence that could still become valid
  kInvalid,     // the first n_bytes (>= 1) can never be valid: one U+FFFD replaces them
};

struct SequenceCheck {
  SequenceStatus status;
  size_t n_bytes;
};

// Classifies the sequence that starts at bytes[0]; `bytes` must not be empty.
SequenceCheck check_sequence(std::string_view bytes);

bool is_valid(std::string_view text);

// `text` with every invalid sequence (including an incomplete one at the end)
// replaced by U+FFFD.
std::string sanitize(std::string_view text);

// Bytes of the character that starts with `lead` in valid UTF-8 (1..4).
inline size_t sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

void append_code_point(std::string& out, char32_t code_point);

// Decodes the character at text[pos] (valid UTF-8) and advances pos past it.
char32_t next_code_point(std::string_view text, size_t& pos);

}  // namespace strata::utf8
