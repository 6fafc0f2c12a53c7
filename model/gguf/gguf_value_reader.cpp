#include "model/gguf/gguf_value_reader.h"

#include "common/str_cat.h"
#include "model/gguf/gguf_error.h"

namespace strata {
namespace {

// The fewest bytes one array item of `type` can take: a string is at least
// its length, an array at least its element type and count.
uint64_t min_item_bytes(GgufType type) {
  switch (type) {
    case GgufType::kString:
      return sizeof(uint64_t);
    case GgufType::kArray:
      return sizeof(uint32_t) + sizeof(uint64_t);
    default:
      return gguf_scalar_bytes(type);
  }
}

}  // namespace

GgufValue GgufValueReader::read_typed_value(std::string_view key) {
  GgufType type = read_type(key, "value type");
  return read_value(type, key, 0);
}

GgufType GgufValueReader::read_type(std::string_view key, std::string_view what) {
  uint64_t at = cursor_.offset();
  auto id = cursor_.read<uint32_t>([&] { return str_cat("metadata '", key, "' ", what); });
  std::optional<GgufType> type = gguf_type_from_id(id);
  if (!type) throw GgufError(str_cat("metadata '", key, "' has unknown ", what, " ", id), at);
  return *type;
}

GgufValue GgufValueReader::read_value(GgufType type, std::string_view key, int depth) {
  // Built only if a read fails: this runs once per array item.
  auto what = [&] { return str_cat("metadata '", key, "' ", gguf_type_name(type), " value"); };
  switch (type) {
    case GgufType::kUint8:
      return cursor_.read<uint8_t>(what);
    case GgufType::kInt8:
      return cursor_.read<int8_t>(what);
    case GgufType::kUint16:
      return cursor_.read<uint16_t>(what);
    case GgufType::kInt16:
      return cursor_.read<int16_t>(what);
    case GgufType::kUint32:
      return cursor_.read<uint32_t>(what);
    case GgufType::kInt32:
      return cursor_.read<int32_t>(what);
    case GgufType::kFloat32:
      return cursor_.read<float>(what);
    case GgufType::kUint64:
      return cursor_.read<uint64_t>(what);
    case GgufType::kInt64:
      return cursor_.read<int64_t>(what);
    case GgufType::kFloat64:
      return cursor_.read<double>(what);
    case GgufType::kBool: {
      // A bool is one byte, 0 or 1; anything else means we are misaligned
      // in the file or it was written wrong.
      uint64_t at = cursor_.offset();
      auto byte = cursor_.read<uint8_t>(what);
      if (byte > 1) {
        throw GgufError(
            str_cat("metadata '", key, "' has invalid bool byte ", static_cast<unsigned>(byte)),
            at);
      }
      return byte == 1;
    }
    case GgufType::kString:
      return cursor_.read_string(what);
    case GgufType::kArray:
      return read_array(key, depth);
  }
  throw GgufError(str_cat("metadata '", key, "' has unknown value type"), cursor_.offset());
}

GgufValue GgufValueReader::read_array(std::string_view key, int depth) {
  uint64_t type_at = cursor_.offset();
  GgufType element_type = read_type(key, "array element type");
  if (element_type == GgufType::kArray && depth + 1 >= kMaxArrayDepth) {
    throw GgufError(str_cat("metadata '", key, "' nests arrays deeper than ", kMaxArrayDepth),
                    type_at);
  }
  uint64_t count_at = cursor_.offset();
  auto count = cursor_.read<uint64_t>([&] { return str_cat("metadata '", key, "' array length"); });
  // Every item takes at least min_item_bytes, so a count the rest of the file
  // cannot hold is rejected before anything is allocated for it.
  if (count > cursor_.remaining() / min_item_bytes(element_type)) {
    throw GgufError(
        str_cat("metadata '", key, "' array of ", count, " ", gguf_type_name(element_type),
                " items cannot fit in the ", cursor_.remaining(), " bytes remaining"),
        count_at);
  }
  if (count > kMaxArrayItems - n_array_items_) {
    throw GgufError(
        str_cat("metadata '", key, "' array of ", count, " items takes the file past the limit of ",
                kMaxArrayItems, " array items"),
        count_at);
  }
  n_array_items_ += count;

  GgufArray array{element_type, {}};
  array.items.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    array.items.push_back(read_value(element_type, key, depth + 1));
  }
  return GgufValue(std::move(array));
}

}  // namespace strata
