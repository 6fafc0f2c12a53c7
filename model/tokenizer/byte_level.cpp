#include "model/tokenizer/byte_level.h"

#include <array>

#include "model/tokenizer/utf8.h"

namespace strata {

namespace {

bool maps_to_itself(uint8_t byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
}

struct ByteLevelTables {
  std::array<char32_t, 256> code_point_of_byte{};
  std::array<int16_t, 324> byte_of_code_point{};  // all alphabet code points are < 324

  ByteLevelTables() {
    byte_of_code_point.fill(-1);
    char32_t next_shifted = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
      const char32_t code_point =
          maps_to_itself(static_cast<uint8_t>(byte)) ? static_cast<char32_t>(byte) : next_shifted++;
      code_point_of_byte[byte] = code_point;
      byte_of_code_point[code_point] = static_cast<int16_t>(byte);
    }
  }
};

const ByteLevelTables& tables() {
  static const ByteLevelTables kTables;  // immutable after first use
  return kTables;
}

}  // namespace

char32_t byte_to_byte_level(uint8_t byte) { return tables().code_point_of_byte[byte]; }

std::optional<uint8_t> byte_level_to_byte(char32_t code_point) {
  if (code_point >= tables().byte_of_code_point.size()) return std::nullopt;
  const int16_t byte = tables().byte_of_code_point[code_point];
  if (byte < 0) return std::nullopt;
  return static_cast<uint8_t>(byte);
}

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) utf8::append_code_point(out, byte_to_byte_level(static_cast<uint8_t>(c)));
  return out;
}

std::string byte_level_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    // Token text from a file may be malformed; such bytes pass through as they are.
    const utf8::SequenceCheck check = utf8::check_sequence(text.substr(pos));
    if (check.status != utf8::SequenceStatus::kComplete) {
      out.append(text.substr(pos, check.n_bytes));
      pos += check.n_bytes;
      continue;
    }
    const size_t start = pos;
    const char32_t code_point = utf8::next_code_point(text, pos);
    if (std::optional<uint8_t> byte = byte_level_to_byte(code_point)) {
      out.push_back(static_cast<char>(*byte));
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

}  // namespace strata
