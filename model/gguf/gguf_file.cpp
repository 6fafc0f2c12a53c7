#include "model/gguf/gguf_file.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <limits>
#include <numeric>

#include "common/str_cat.h"
#include "model/gguf/gguf_cursor.h"
#include "model/gguf/gguf_value_reader.h"

namespace strata {
namespace {

// The fewest bytes a record can take, to reject counts that the rest of the
// file could not hold before reserving anything for them.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;                  // empty key, type id, one-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, n_dims, one dim,
                                                             // type id, offset
// ggml counts elements in int64_t.
constexpr uint64_t kMaxElems = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", value);
  return text;
}

uint32_t read_version(GgufCursor& cursor) {
  uint64_t at = cursor.offset();
  auto version = cursor.read<uint32_t>("version");
  if (version == 2 || version == 3) return version;
  if (version == 1) {
    // v1 used 32-bit counts and lengths; nothing current writes it.
    throw GgufError("GGUF version 1 is not supported (only versions 2 and 3)", at);
  }
  if (version == 0x02000000 || version == 0x03000000) {
    throw GgufError("big-endian GGUF files are not supported", at);
  }
  throw GgufError(str_cat("unsupported GGUF version ", version, " (only versions 2 and 3)"), at);
}

// A record count from the header: at most `limit`, and no more than the rest
// of the file could hold at `min_record_bytes` each.
uint64_t read_count(GgufCursor& cursor, const char* what, uint64_t min_record_bytes,
                    uint64_t limit) {
  uint64_t at = cursor.offset();
  auto count = cursor.read<uint64_t>(what);
  if (count > cursor.remaining() / min_record_bytes) {
    throw GgufError(str_cat(what, " ", count, " is more than the ", cursor.remaining(),
                            " bytes remaining could hold"),
                    at);
  }
  if (count > limit)
    throw GgufError(str_cat(what, " ", count, " exceeds the limit of ", limit), at);
  return count;
}

uint64_t alignment_from(const GgufValue* value, uint64_t value_at) {
  if (value == nullptr) return GgufFile::kDefaultAlignment;
  std::optional<uint64_t> alignment = value->as_uint();
  if (!alignment || !std::has_single_bit(*alignment)) {
    throw GgufError(str_cat("general.alignment ", value->describe(), " (",
                            gguf_type_name(value->type()), ") is not a nonzero power of two"),
                    value_at);
  }
  return *alignment;
}

// Also sets `offset_field_at`, the file offset of the tensor's data offset
// field: errors about its data, found once all infos are read, point there.
GgufTensorInfo read_tensor_info(GgufCursor& cursor, uint64_t alignment, uint64_t& offset_field_at) {
  GgufTensorInfo tensor;
  tensor.name = cursor.read_string("tensor name");
  auto field = [&](std::string_view what) { return str_cat("tensor '", tensor.name, "' ", what); };

  uint64_t n_dims_at = cursor.offset();
  auto n_dims = cursor.read<uint32_t>(field("dimension count"));
  if (n_dims == 0 || n_dims > GgufFile::kMaxDims) {
    throw GgufError(
        field(str_cat("has ", n_dims, " dimensions (expected 1 to ", GgufFile::kMaxDims, ")")),
        n_dims_at);
  }
  tensor.dims.reserve(n_dims);
  tensor.n_elems = 1;
  for (uint32_t i = 0; i < n_dims; ++i) {
    uint64_t dim_at = cursor.offset();
    auto dim = cursor.read<uint64_t>(field("dimension"));
    if (dim == 0) throw GgufError(field(str_cat("dimension ", i, " is 0")), dim_at);
    std::optional<uint64_t> n_elems = checked_mul(tensor.n_elems, dim);
    if (!n_elems || *n_elems > kMaxElems) {
      throw GgufError(
          field(str_cat("dimension ", i, " (", dim, ") makes the element count overflow")), dim_at);
    }
    tensor.dims.push_back(dim);
    tensor.n_elems = *n_elems;
  }

  uint64_t type_at = cursor.offset();
  auto type_id = cursor.read<uint32_t>(field("type"));
  const WeightTypeInfo* type = find_weight_type(type_id);
  if (type == nullptr) throw GgufError(field(str_cat("has unknown type id ", type_id)), type_at);
  tensor.type = type->type;
  // Kernels work row by row, so a row must be a whole number of blocks (as
  // ggml requires); that also makes n_elems a whole number of blocks.
  if (tensor.dims[0] % type->block_elems != 0) {
    throw GgufError(
        field(str_cat("of type ", type->name, " has rows of ", tensor.dims[0],
                      " elements, not a whole number of ", type->block_elems, "-element blocks")),
        type_at);
  }
  // weight_bytes() assumes the byte count fits; check that first.
  if (!checked_mul(tensor.n_elems / type->block_elems, type->block_bytes)) {
    throw GgufError(field(str_cat("of ", tensor.n_elems, " ", type->name,
                                  " elements has a byte size that overflows")),
                    type_at);
  }
  tensor.n_bytes = weight_bytes(tensor.type, tensor.n_elems).value();

  offset_field_at = cursor.offset();
  tensor.offset = cursor.read<uint64_t>(field("data offset"));
  if (tensor.offset % alignment != 0) {
    throw GgufError(field(str_cat("data offset ", tensor.offset,
                                  " is not a multiple of the alignment ", alignment)),
                    offset_field_at);
  }
  return tensor;
}

// Points each tensor at its bytes, after checking that they lie inside the
// file and that no two tensors share a byte.
void place_tensor_data(std::span<const std::byte> bytes, uint64_t data_offset,
                       std::vector<GgufTensorInfo>& tensors,
                       const std::vector<uint64_t>& offset_fields_at) {
  const uint64_t file_size = bytes.size();
  for (size_t i = 0; i < tensors.size(); ++i) {
    GgufTensorInfo& tensor = tensors[i];
    std::optional<uint64_t> begin = checked_add(data_offset, tensor.offset);
    std::optional<uint64_t> end = begin ? checked_add(*begin, tensor.n_bytes) : std::nullopt;
    if (!end || *end > file_size) {
      std::string range =
          end ? str_cat("[", *begin, ", ", *end, ")")
              : str_cat("of ", tensor.n_bytes, " bytes at ", data_offset, " + ", tensor.offset);
      throw GgufError(str_cat("tensor '", tensor.name, "' data ", range,
                              " lies outside the file (size ", file_size, ")"),
                      offset_fields_at[i]);
    }
    tensor.data = bytes.subspan(*begin, tensor.n_bytes);
  }

  // Sorted by start, the tensors are disjoint exactly when each one ends at
  // or before the next one begins.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const GgufTensorInfo& before = tensors[order[k - 1]];
    const GgufTensorInfo& tensor = tensors[order[k]];
    if (tensor.offset < before.offset + before.n_bytes) {  // no overflow: both lie in the file
      auto range = [&](const GgufTensorInfo& t) {
        return str_cat("[", data_offset + t.offset, ", ", data_offset + t.offset + t.n_bytes, ")");
      };
      throw GgufError(str_cat("tensor '", tensor.name, "' data ", range(tensor),
                              " overlaps tensor '", before.name, "' data ", range(before)),
                      offset_fields_at[order[k]]);
    }
  }
}

}  // namespace

GgufFile GgufFile::open(const std::string& path) {
  MappedFile map = MappedFile::open_read_only(path);
  GgufFile file = parse(map.bytes());
  file.file_ = std::move(map);  // moving the map keeps its address, so the spans stay valid
  return file;
}

GgufFile GgufFile::parse(std::span<const std::byte> bytes) {
  GgufCursor cursor(bytes);
  GgufFile file;
  file.bytes_ = bytes;

  auto magic = cursor.read<uint32_t>("magic");
  if (magic != kMagic) {
    throw GgufError(str_cat("not a GGUF file (magic ", hex32(magic), ", expected ", hex32(kMagic),
                            " \"GGUF\")"),
                    0);
  }
  file.version_ = read_version(cursor);
  uint64_t n_tensors = read_count(cursor, "tensor count", kMinTensorInfoBytes, kMaxTensors);
  uint64_t n_kv = read_count(cursor, "metadata key count", kMinKvBytes, kMaxMetadataKeys);

  GgufValueReader values(cursor);
  file.metadata_.reserve(n_kv);
  uint64_t alignment_at = 0;
  for (uint64_t i = 0; i < n_kv; ++i) {
    uint64_t key_at = cursor.offset();
    std::string key = cursor.read_string("metadata key");
    if (file.metadata_index_.contains(key)) {
      throw GgufError(str_cat("duplicate metadata key '", key, "'"), key_at);
    }
    uint64_t value_at = cursor.offset() + sizeof(uint32_t);  // past the type id
    GgufValue value = values.read_typed_value(key);
    if (key == "general.alignment") alignment_at = value_at;
    file.metadata_index_.emplace(key, file.metadata_.size());
    file.metadata_.emplace_back(std::move(key), std::move(value));
  }
  file.alignment_ = alignment_from(file.find("general.alignment"), alignment_at);

  std::vector<uint64_t> offset_fields_at;
  uint64_t n_tensors_fit = std::min(n_tensors, cursor.remaining() / kMinTensorInfoBytes);
  offset_fields_at.reserve(n_tensors_fit);
  file.tensors_.reserve(n_tensors_fit);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    uint64_t name_at = cursor.offset();
    GgufTensorInfo tensor =
        read_tensor_info(cursor, file.alignment_, offset_fields_at.emplace_back());
    if (!file.tensor_index_.emplace(tensor.name, file.tensors_.size()).second) {
      throw GgufError(str_cat("duplicate tensor name '", tensor.name, "'"), name_at);
    }
    file.tensors_.push_back(std::move(tensor));
  }

  // The data section starts at the first multiple of the alignment at or
  // after the end of the header.
  uint64_t header_end = cursor.offset();
  std::optional<uint64_t> padded_end = checked_add(header_end, file.alignment_ - 1);
  if (!padded_end) {
    throw GgufError(str_cat("data section offset overflows with alignment ", file.alignment_),
                    header_end);
  }
  file.data_offset_ = *padded_end / file.alignment_ * file.alignment_;
  place_tensor_data(bytes, file.data_offset_, file.tensors_, offset_fields_at);
  return file;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

std::optional<int64_t> GgufFile::find_int(const std::string& key) const {
  const GgufValue* value = find(key);
  return value ? value->as_int() : std::nullopt;
}

std::optional<uint64_t> GgufFile::find_uint(const std::string& key) const {
  const GgufValue* value = find(key);
  return value ? value->as_uint() : std::nullopt;
}

std::optional<double> GgufFile::find_float(const std::string& key) const {
  const GgufValue* value = find(key);
  return value ? value->as_float() : std::nullopt;
}

std::optional<bool> GgufFile::find_bool(const std::string& key) const {
  const GgufValue* value = find(key);
  return value ? value->as_bool() : std::nullopt;
}

const std::string* GgufFile::find_string(const std::string& key) const {
  const GgufValue* value = find(key);
  return value ? value->as_string() : nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace strata
