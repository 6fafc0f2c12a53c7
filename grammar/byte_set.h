// ByteSet: a set of byte values, the one terminal of a grammar. A UTF-8 character
// of several bytes is a sequence of byte sets, so the matcher never decodes text.
//
// A plain value: any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace strata::grammar {

class ByteSet {
 public:
  constexpr ByteSet() = default;

  static ByteSet of(uint8_t byte) {
    ByteSet set;
    set.insert(byte);
    return set;
  }
  // Every byte in [first, last], both included.
  static ByteSet range(uint8_t first, uint8_t last) {
    ByteSet set;
    set.insert_range(first, last);
    return set;
  }
  // Every byte that appears in `bytes`.
  static ByteSet of_chars(std::string_view bytes) {
    ByteSet set;
    for (char c : bytes) set.insert(static_cast<uint8_t>(c));
    return set;
  }

  void insert(uint8_t byte) { words_[byte >> 6] |= uint64_t{1} << (byte & 63); }
  void insert_range(uint8_t first, uint8_t last) {
    for (unsigned b = first; b <= last; ++b) insert(static_cast<uint8_t>(b));
  }
  void erase(uint8_t byte) { words_[byte >> 6] &= ~(uint64_t{1} << (byte & 63)); }
  bool contains(uint8_t byte) const { return (words_[byte >> 6] >> (byte & 63)) & 1; }
  bool empty() const { return (words_[0] | words_[1] | words_[2] | words_[3]) == 0; }

  ByteSet& operator|=(const ByteSet& other) {
    for (int i = 0; i < 4; ++i) words_[i] |= other.words_[i];
    return *this;
  }
  // The smallest byte of the set; the set must not be empty.
  uint8_t first() const {
    for (int i = 0; i < 4; ++i) {
      if (words_[i] != 0) return static_cast<uint8_t>(i * 64 + __builtin_ctzll(words_[i]));
    }
    return 0;
  }
  bool operator==(const ByteSet&) const = default;

 private:
  std::array<uint64_t, 4> words_{};  // bit b of the 256 is words_[b / 64] >> (b % 64)
};

}  // namespace strata::grammar
