#include "model/gguf/gguf_value.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/str_cat.h"

namespace strata {
namespace {

// The variant's alternatives are listed in the format's type order, so a
// value's GgufType is its variant index. Keep the two in step.
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<size_t>(GgufType::kUint8), GgufValue::Storage>,
              uint8_t>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<size_t>(GgufType::kBool), GgufValue::Storage>,
              bool>);
static_assert(std::is_same_v<
              std::variant_alternative_t<static_cast<size_t>(GgufType::kArray), GgufValue::Storage>,
              GgufArray>);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(GgufType::kFloat64),
                                                        GgufValue::Storage>,
                             double>);
static_assert(std::variant_size_v<GgufValue::Storage> == 13);

template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Appends `text` quoted, with control bytes, quotes and backslashes escaped,
// cut after `max_chars` bytes so that a chat template stays one short line.
void append_quoted(std::ostringstream& out, const std::string& text, size_t max_chars) {
  static constexpr char kHex[] = "0123456789abcdef";
  out << '"';
  size_t n = std::min(text.size(), max_chars);
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\r':
        out << "\\r";
        break;
      case '\t':
        out << "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out << "\\x" << kHex[c >> 4] << kHex[c & 0xf];
        } else {
          out << static_cast<char>(c);
        }
    }
  }
  out << '"';
  if (text.size() > max_chars) out << "...";
}

}  // namespace

std::string_view gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
      return "uint8";
    case GgufType::kInt8:
      return "int8";
    case GgufType::kUint16:
      return "uint16";
    case GgufType::kInt16:
      return "int16";
    case GgufType::kUint32:
      return "uint32";
    case GgufType::kInt32:
      return "int32";
    case GgufType::kFloat32:
      return "float32";
    case GgufType::kBool:
      return "bool";
    case GgufType::kString:
      return "string";
    case GgufType::kArray:
      return "array";
    case GgufType::kUint64:
      return "uint64";
    case GgufType::kInt64:
      return "int64";
    case GgufType::kFloat64:
      return "float64";
  }
  return "unknown";
}

std::optional<GgufType> gguf_type_from_id(uint32_t id) {
  if (id > static_cast<uint32_t>(GgufType::kFloat64)) return std::nullopt;
  return static_cast<GgufType>(id);
}

size_t gguf_scalar_bytes(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    case GgufType::kString:
    case GgufType::kArray:
      return 0;
  }
  return 0;
}

GgufValue GgufValue::array(GgufType element_type, std::vector<GgufValue> items) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].type() != element_type) {
      throw std::invalid_argument(str_cat("gguf array of ", gguf_type_name(element_type), ": item ",
                                          i, " is a ", gguf_type_name(items[i].type())));
    }
  }
  return GgufValue(GgufArray{element_type, std::move(items)});
}

GgufValue GgufValue::string_array(const std::vector<std::string>& items) {
  GgufArray array{GgufType::kString, {}};
  array.items.reserve(items.size());
  for (const std::string& item : items) array.items.emplace_back(item);
  return GgufValue(std::move(array));
}

GgufValue GgufValue::f32_array(const std::vector<float>& items) {
  GgufArray array{GgufType::kFloat32, {}};
  array.items.reserve(items.size());
  for (float item : items) array.items.emplace_back(item);
  return GgufValue(std::move(array));
}

GgufValue GgufValue::i32_array(const std::vector<int32_t>& items) {
  GgufArray array{GgufType::kInt32, {}};
  array.items.reserve(items.size());
  for (int32_t item : items) array.items.emplace_back(item);
  return GgufValue(std::move(array));
}

GgufType GgufValue::type() const { return static_cast<GgufType>(storage_.index()); }

std::optional<int64_t> GgufValue::as_int() const {
  return std::visit(
      [](const auto& v) -> std::optional<int64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (kIsInteger<T> && std::is_signed_v<T>) {
          return static_cast<int64_t>(v);
        } else if constexpr (kIsInteger<T>) {
          if (static_cast<uint64_t>(v) >
              static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return std::nullopt;
          }
          return static_cast<int64_t>(v);
        } else {
          return std::nullopt;
        }
      },
      storage_);
}

std::optional<uint64_t> GgufValue::as_uint() const {
  return std::visit(
      [](const auto& v) -> std::optional<uint64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (kIsInteger<T> && std::is_signed_v<T>) {
          if (v < 0) return std::nullopt;
          return static_cast<uint64_t>(v);
        } else if constexpr (kIsInteger<T>) {
          return static_cast<uint64_t>(v);
        } else {
          return std::nullopt;
        }
      },
      storage_);
}

std::optional<double> GgufValue::as_float() const {
  return std::visit(
      [](const auto& v) -> std::optional<double> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (kIsInteger<T> || std::is_floating_point_v<T>) {
          return static_cast<double>(v);
        } else {
          return std::nullopt;
        }
      },
      storage_);
}

std::optional<bool> GgufValue::as_bool() const {
  if (const bool* v = std::get_if<bool>(&storage_)) return *v;
  return std::nullopt;
}

const std::string* GgufValue::as_string() const { return std::get_if<std::string>(&storage_); }

const GgufArray* GgufValue::as_array() const { return std::get_if<GgufArray>(&storage_); }

std::optional<std::vector<std::string>> GgufValue::as_string_array() const {
  const GgufArray* array = as_array();
  if (array == nullptr) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(array->items.size());
  for (const GgufValue& item : array->items) {
    const std::string* text = item.as_string();
    if (text == nullptr) return std::nullopt;
    out.push_back(*text);
  }
  return out;
}

std::optional<std::vector<float>> GgufValue::as_f32_array() const {
  const GgufArray* array = as_array();
  if (array == nullptr) return std::nullopt;
  std::vector<float> out;
  out.reserve(array->items.size());
  for (const GgufValue& item : array->items) {
    std::optional<double> v = item.as_float();
    if (!v) return std::nullopt;
    out.push_back(static_cast<float>(*v));
  }
  return out;
}

std::optional<std::vector<int32_t>> GgufValue::as_i32_array() const {
  const GgufArray* array = as_array();
  if (array == nullptr) return std::nullopt;
  std::vector<int32_t> out;
  out.reserve(array->items.size());
  for (const GgufValue& item : array->items) {
    std::optional<int64_t> v = item.as_int();
    if (!v || *v < std::numeric_limits<int32_t>::min() ||
        *v > std::numeric_limits<int32_t>::max()) {
      return std::nullopt;
    }
    out.push_back(static_cast<int32_t>(*v));
  }
  return out;
}

std::string GgufValue::describe() const {
  std::ostringstream out;
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          out << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
          out << static_cast<int>(v);  // a number, not a character
        } else if constexpr (kIsInteger<T>) {
          out << v;
        } else if constexpr (std::is_floating_point_v<T>) {
          // digits10, not max_digits10: 1e-05f prints as "1e-05", not "9.99999975e-06".
          out.precision(std::numeric_limits<T>::digits10);
          out << v;
        } else if constexpr (std::is_same_v<T, std::string>) {
          append_quoted(out, v, kDescribeMaxChars);
        } else {
          out << '[' << gguf_type_name(v.element_type) << " x " << v.items.size() << ']';
        }
      },
      storage_);
  return out.str();
}

}  // namespace strata
