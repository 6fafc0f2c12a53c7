// GPT-2's byte-level alphabet: every byte maps to one printable code point, so a
// byte-level BPE vocabulary of arbitrary bytes can be stored as text. Bytes
// '!'..'~', 0xA1..0xAC and 0xAE..0xFF map to themselves; the other 68 (controls,
// space, DEL, NBSP, soft hyphen...) map to U+0100.. in byte order, so a space is
// stored as "Ġ" (U+0120) and a newline as "Ċ" (U+010A).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

char32_t byte_to_byte_level(uint8_t byte);
std::optional<uint8_t> byte_level_to_byte(char32_t code_point);  // nullopt: not in the alphabet

// Each byte of `bytes` as the UTF-8 of its byte-level code point.
std::string byte_level_encode(std::string_view bytes);

// The inverse, for token text. A code point outside the alphabet (never in a
// real byte-level vocabulary) or malformed UTF-8 is kept as it is.
std::string byte_level_decode(std::string_view text);

}  // namespace strata
