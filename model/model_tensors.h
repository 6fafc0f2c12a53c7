// The tensors an architecture needs, with names and shapes as llama.cpp's
// converters write them. Used to validate a model on load and by the developer
// command that writes random models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace strata {

enum class TensorRole {
  kMatrix,  // a weight matrix: may be quantized
  kVector,  // a norm weight or a bias: stays F32
};

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the row (contiguous) length
  TensorRole role = TensorRole::kMatrix;
};

// Every tensor of `config`'s architecture, in the order llama.cpp writes them.
// output.weight is left out when config.tied_output is set.
std::vector<TensorSpec> model_tensor_specs(const ModelConfig& config);

}  // namespace strata
