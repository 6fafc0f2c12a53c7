// GgufCursor: bounds-checked little-endian reads over the bytes of a GGUF
// file. A read that would run past the end throws GgufError naming what was
// being read and where; nothing is ever read outside the span.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

namespace strata {

// GGUF v2/v3 files as written by everyone are little endian; reading by memcpy
// relies on the host being the same.
static_assert(std::endian::native == std::endian::little, "GGUF is read on little-endian hosts");

class GgufCursor {
 public:
  explicit GgufCursor(std::span<const std::byte> bytes) : bytes_(bytes) {}

  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return bytes_.size() - offset_; }

  // `what` names the field for errors ("tensor count"): a string, or a
  // callable returning one, called only when the read fails, so that reading
  // a million array items builds no message strings.
  template <typename T, typename What>
    requires std::is_trivially_copyable_v<T>
  T read(const What& what) {
    if (sizeof(T) > remaining()) [[unlikely]] fail_truncated(sizeof(T), describe(what));
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  // A GGUF string: uint64 length, then that many bytes (no terminator).
  template <typename What>
  std::string read_string(const What& what) {
    uint64_t length_at = offset_;
    auto length = read<uint64_t>(what);
    if (length > remaining()) [[unlikely]] fail_length(length_at, length, describe(what));
    std::string text(reinterpret_cast<const char*>(bytes_.data() + offset_), length);
    offset_ += length;
    return text;
  }

 private:
  template <typename What>
  static std::string describe(const What& what) {
    if constexpr (std::is_invocable_v<const What&>) {
      return what();
    } else {
      return std::string(what);
    }
  }
  [[noreturn]] void fail_truncated(uint64_t n_needed, const std::string& what) const;
  [[noreturn]] void fail_length(uint64_t length_at, uint64_t length, const std::string& what) const;

  std::span<const std::byte> bytes_;
  uint64_t offset_ = 0;  // invariant: offset_ <= bytes_.size()
};

}  // namespace strata
