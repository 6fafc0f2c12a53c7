// GgufWriter: builds a GGUF file (version 3 by default) from metadata and
// tensors. Used by tests and developer tools; float tensors are quantized to
// any supported WeightType on the way in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf_value.h"
#include "kernels/weight_type.h"

namespace strata {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3, uint64_t alignment = 32);

  // Adds or replaces a metadata key (general.alignment is written from the
  // constructor's alignment, not from here).
  void set(const std::string& key, GgufValue value);

  // dims in ggml order (dims[0] contiguous). Quantizes `values` (row-major,
  // product(dims) floats) to `type`; throws std::invalid_argument if the
  // type is unsupported or dims[0] is not a whole number of the type's blocks.
  void add_tensor(const std::string& name, std::vector<uint64_t> dims, WeightType type,
                  std::span<const float> values);
  // Already encoded bytes (e.g. hand-built quant blocks in tests).
  void add_tensor_bytes(const std::string& name, std::vector<uint64_t> dims, WeightType type,
                        std::vector<std::byte> bytes);

  // The whole file in memory (tests), or written to `path` through a temporary
  // file and a rename, so a reader never sees a half-written model.
  std::vector<std::byte> serialize() const;
  void write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    WeightType type;
    std::vector<std::byte> bytes;
  };
  uint32_t version_;
  uint64_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

}  // namespace strata
