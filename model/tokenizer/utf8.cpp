#include "model/tokenizer/utf8.h"

namespace strata::utf8 {

namespace {

bool is_continuation(uint8_t byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

SequenceCheck check_sequence(std::string_view bytes) {
  const auto lead = static_cast<uint8_t>(bytes[0]);
  if (lead < 0x80) return {SequenceStatus::kComplete, 1};

  // Well-formed sequences (Unicode Table 3-7): the lead fixes the length and
  // the range of the second byte; later bytes are plain continuations.
  size_t length = 0;
  uint8_t second_min = 0x80;
  uint8_t second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // no overlong forms
    if (lead == 0xED) second_max = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // no overlong forms
    if (lead == 0xF4) second_max = 0x8F;  // nothing above U+10FFFF
  } else {
    return {SequenceStatus::kInvalid, 1};  // continuation byte, C0, C1, F5..FF
  }

  for (size_t i = 1; i < length; ++i) {
    if (i >= bytes.size()) return {SequenceStatus::kIncomplete, bytes.size()};
    const auto byte = static_cast<uint8_t>(bytes[i]);
    const bool ok = (i == 1) ? (byte >= second_min && byte <= second_max) : is_continuation(byte);
    if (!ok) return {SequenceStatus::kInvalid, i};
  }
  return {SequenceStatus::kComplete, length};
}

bool is_valid(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    // ASCII runs are the common case; skip them without classifying.
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const SequenceCheck check = check_sequence(text.substr(pos));
    if (check.status != SequenceStatus::kComplete) return false;
    pos += check.n_bytes;
  }
  return true;
}

std::string sanitize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const SequenceCheck check = check_sequence(text.substr(pos));
    if (check.status == SequenceStatus::kComplete) {
      out.append(text.substr(pos, check.n_bytes));
    } else {
      out.append(kReplacementCharacter);
    }
    pos += check.n_bytes;
  }
  return out;
}

void append_code_point(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

char32_t next_code_point(std::string_view text, size_t& pos) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  const size_t length = sequence_length(lead);
  char32_t code_point = (length == 1)   ? lead
                        : (length == 2) ? (lead & 0x1F)
                        : (length == 3) ? (lead & 0x0F)
                                        : (lead & 0x07);
  for (size_t i = 1; i < length; ++i) {
    code_point = (code_point << 6) | (static_cast<uint8_t>(text[pos + i]) & 0x3F);
  }
  pos += length;
  return code_point;
}

}  // namespace strata::utf8
