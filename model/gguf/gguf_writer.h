// GgufWriter: builds a GGUF file (version 3 by default) from metadata and
// tensors. Used by tests and developer tools; float tensors are quantized to
// any supported WeightType on the way in.
//
// Layout: header, metadata in the order first set (general.alignment first
// when it is not the default 32), tensor infos in the order added, padding to
// the alignment, then each tensor's data padded to the alignment.
// Invalid input is a std::invalid_argument at the call that brings it in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kernels/weight_type.h"
#include "model/gguf/gguf_value.h"

namespace strata {

class GgufWriter {
 public:
  // version 2 or 3; alignment a power of two that fits in uint32.
  explicit GgufWriter(uint32_t version = 3, uint64_t alignment = 32);

  // Adds or replaces a metadata key. general.alignment is written from the
  // constructor's alignment; setting it here throws std::invalid_argument, as
  // does an array holding an item of another type than its element type.
  void set(const std::string& key, GgufValue value);

  // dims in ggml order (dims[0] contiguous). Quantizes `values` (row-major,
  // product(dims) floats) to `type`; throws std::invalid_argument if the
  // type is unsupported or dims[0] is not a whole number of the type's blocks.
  void add_tensor(const std::string& name, std::vector<uint64_t> dims, WeightType type,
                  std::span<const float> values);
  // Already encoded bytes (e.g. hand-built quant blocks in tests). Any known
  // type, supported or not; bytes.size() must be weight_bytes(type, n_elems).
  void add_tensor_bytes(const std::string& name, std::vector<uint64_t> dims, WeightType type,
                        std::vector<std::byte> bytes);

  // The whole file in memory (tests), or written to `path` through a temporary
  // file and a rename, so a reader never sees a half-written model. write()
  // throws std::runtime_error naming the path and the OS error.
  std::vector<std::byte> serialize() const;
  void write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;  // ggml order
    WeightType type;
    std::vector<std::byte> bytes;  // weight_bytes(type, product(dims))
  };
  using Sink = std::function<void(std::span<const std::byte>)>;

  void check_new_tensor(const std::string& name, const std::vector<uint64_t>& dims,
                        WeightType type) const;
  // Hands the file to `sink` in order, in pieces: header, then each tensor's
  // data and padding (so write() need not hold a second copy of the weights).
  void emit(const Sink& sink) const;
  std::vector<std::byte> encode_header() const;
  uint32_t version_;
  uint64_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

}  // namespace strata
