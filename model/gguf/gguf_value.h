// GgufValue: one metadata value of a GGUF file (a scalar, a string, or an array
// of values). Numbering of GgufType is the file format's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace strata {

enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// "uint8", "string", "array", ...; "unknown" for values outside the enum.
std::string_view gguf_type_name(GgufType type);
// The type a file's type id names; nullopt for ids the format does not define.
std::optional<GgufType> gguf_type_from_id(uint32_t id);
// Bytes one value of a fixed-size type takes in a file; 0 for kString and
// kArray, whose size depends on their contents.
size_t gguf_scalar_bytes(GgufType type);

class GgufValue;

// All items of a GGUF array have one type (element_type); nested arrays are
// legal in the format and kept as items of type kArray.
struct GgufArray {
  GgufType element_type = GgufType::kUint8;
  std::vector<GgufValue> items;

  bool operator==(const GgufArray&) const = default;
};

class GgufValue {
 public:
  static constexpr size_t kDescribeMaxChars = 64;

  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float,
                               bool, std::string, GgufArray, uint64_t, int64_t, double>;

  GgufValue() = default;
  // Implicit from any stored alternative: GgufValue v = uint32_t{4};
  template <typename T>
    requires std::is_constructible_v<Storage, T&&>
  GgufValue(T&& value) : storage_(std::forward<T>(value)) {}  // NOLINT
  GgufValue(const char* text) : storage_(std::string(text)) {}  // NOLINT

  // Throws std::invalid_argument if an item is not of element_type.
  static GgufValue array(GgufType element_type, std::vector<GgufValue> items);
  static GgufValue string_array(const std::vector<std::string>& items);
  static GgufValue f32_array(const std::vector<float>& items);
  static GgufValue i32_array(const std::vector<int32_t>& items);

  // Same type and same contents (so a float NaN is never equal).
  bool operator==(const GgufValue&) const = default;

  GgufType type() const;
  const Storage& storage() const { return storage_; }

  // Typed reads. Integers convert between widths only when the value fits
  // (a uint32 holding 7 reads as int64 7; -1 never reads as uint32).
  std::optional<int64_t> as_int() const;
  std::optional<uint64_t> as_uint() const;
  std::optional<double> as_float() const;  // any integer or float type
  std::optional<bool> as_bool() const;
  const std::string* as_string() const;
  const GgufArray* as_array() const;

  // Whole arrays in one call; nullopt when this is not an array or any item
  // does not convert.
  std::optional<std::vector<std::string>> as_string_array() const;
  std::optional<std::vector<float>> as_f32_array() const;
  std::optional<std::vector<int32_t>> as_i32_array() const;

  // Short human form for `strata info`: numbers, quoted strings (escaped, cut
  // after kDescribeMaxChars bytes with "..."), arrays as "[string x 32000]".
  std::string describe() const;

 private:
  Storage storage_;
};

}  // namespace strata
