// GgufFile: a parsed GGUF file (versions 2 and 3), memory mapped. Tensor data
// is read in place from the map; nothing is copied.
//
// Every malformed input is rejected with a GgufError naming the problem and the
// byte offset where it was found; parsing never reads outside the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/mapped_file.h"
#include "engine/gguf/gguf_value.h"
#include "kernels/weight_type.h"

namespace strata {

class GgufError : public std::runtime_error {
 public:
  GgufError(const std::string& problem, uint64_t offset);
  const std::string& problem() const { return problem_; }
  uint64_t offset() const { return offset_; }

 private:
  std::string problem_;
  uint64_t offset_;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the contiguous (row) dimension
  WeightType type = WeightType::kF32;
  uint64_t offset = 0;   // from the start of the data section, as in the file
  uint64_t n_elems = 0;  // product of dims
  uint64_t n_bytes = 0;  // bytes of the tensor's data
  std::span<const std::byte> data;  // in the mapped file (empty span for empty tensors)
};

class GgufFile {
 public:
  static constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little endian
  static constexpr uint64_t kDefaultAlignment = 32;

  // Map and parse a file. Throws std::runtime_error if it cannot be opened and
  // GgufError if it is malformed.
  static GgufFile open(const std::string& path);
  // Parse bytes owned by the caller; they must outlive the GgufFile.
  static GgufFile parse(std::span<const std::byte> bytes);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // file offset of the data section
  const std::string& path() const { return file_.path(); }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(const std::string& key) const;  // nullptr if absent

  // Typed lookups: nullopt / nullptr when absent or of another type.
  std::optional<int64_t> find_int(const std::string& key) const;
  std::optional<uint64_t> find_uint(const std::string& key) const;
  std::optional<double> find_float(const std::string& key) const;
  std::optional<bool> find_bool(const std::string& key) const;
  const std::string* find_string(const std::string& key) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;  // nullptr if absent

 private:
  MappedFile file_;  // empty when parsed from caller-owned bytes
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;  // key -> index in metadata_
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;  // name -> index in tensors_
};

}  // namespace strata
