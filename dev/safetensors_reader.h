// Reads Hugging Face safetensors files: an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range,
// then the raw little-endian data. Tensors are decoded to float32 on request.
// For `strata-dev import-weights`; runs on the command line's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata {

struct SafetensorsTensor {
  std::string dtype;             // "F32", "F16" or "BF16" (others are refused on load)
  std::vector<uint64_t> shape;   // row-major, outermost first (PyTorch order)
  std::vector<std::byte> bytes;  // product(shape) * element size
};

// name -> tensor, from one or more files. Throws std::runtime_error naming the
// file and the problem: unreadable, malformed header, byte ranges outside the
// data or overlapping, an unsupported dtype, a name found in two files.
class SafetensorsReader {
 public:
  // A .safetensors file, or a directory: every *.safetensors file in it
  // (sharded checkpoints, as model-0000N-of-0000M.safetensors).
  explicit SafetensorsReader(const std::string& path);

  const std::map<std::string, SafetensorsTensor>& tensors() const { return tensors_; }
  // The tensor as float32 values, row-major; throws if `name` is absent.
  std::vector<float> values(const std::string& name) const;

 private:
  void read_file(const std::string& path);
  std::map<std::string, SafetensorsTensor> tensors_;
};

}  // namespace strata
