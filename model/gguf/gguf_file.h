// GgufFile: a parsed GGUF file (versions 2 and 3), memory mapped. Tensor data
// is read in place from the map; nothing is copied.
//
// Every malformed input is rejected with a GgufError naming the problem and the
// byte offset where it was found; parsing never reads outside the buffer and
// never allocates more than a small multiple of the file's size.
//
// What a parsed file guarantees: version 2 or 3; unique metadata keys and
// tensor names; an alignment that is a power of two; every tensor has 1..4
// nonzero dims, a known type, rows (dims[0]) that are a whole number of the
// type's blocks, an aligned offset, and data inside the file that overlaps no
// other tensor. A known type that Strata cannot compute with is accepted here
// (so `strata info` can show it); the model loader refuses it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/mapped_file.h"
#include "kernels/weight_type.h"
#include "model/gguf/gguf_error.h"
#include "model/gguf/gguf_value.h"

namespace strata {

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the contiguous (row) dimension
  WeightType type = WeightType::kF32;
  uint64_t offset = 0;              // from the start of the data section, as in the file
  uint64_t n_elems = 0;             // product of dims, >= 1 and < 2^63
  uint64_t n_bytes = 0;             // bytes of the tensor's data, >= 1
  std::span<const std::byte> data;  // n_bytes in the mapped file (or the caller's bytes)
};

class GgufFile {
 public:
  static constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little endian
  static constexpr uint64_t kDefaultAlignment = 32;
  static constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
  // Far above any real model (a few thousand tensors, a few hundred keys);
  // they bound what a hostile header can make the reader allocate.
  static constexpr uint64_t kMaxTensors = uint64_t{1} << 20;
  static constexpr uint64_t kMaxMetadataKeys = uint64_t{1} << 20;

  // Map and parse a file. Throws std::runtime_error if it cannot be opened and
  // GgufError if it is malformed.
  static GgufFile open(const std::string& path);
  // Parse bytes owned by the caller; they must outlive the GgufFile. path() is
  // then empty.
  static GgufFile parse(std::span<const std::byte> bytes);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  // File offset of the data section: the end of the header rounded up to the
  // alignment. May lie past the end of a file that holds no tensors.
  uint64_t data_offset() const { return data_offset_; }
  const std::string& path() const { return file_.path(); }
  // The whole file as parsed: the map, or the caller's bytes.
  std::span<const std::byte> bytes() const { return bytes_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(const std::string& key) const;  // nullptr if absent

  // Typed lookups: nullopt / nullptr when absent or of another type (the
  // conversions are GgufValue's as_int, as_uint, ...).
  std::optional<int64_t> find_int(const std::string& key) const;
  std::optional<uint64_t> find_uint(const std::string& key) const;
  std::optional<double> find_float(const std::string& key) const;
  std::optional<bool> find_bool(const std::string& key) const;
  const std::string* find_string(const std::string& key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;  // nullptr if absent

 private:
  MappedFile file_;  // empty when parsed from caller-owned bytes
  std::span<const std::byte> bytes_;  // the whole file: file_'s map or the caller's bytes
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;  // key -> index in metadata_
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;  // name -> index in tensors_
};

}  // namespace strata
