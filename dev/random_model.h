// Random models for tests and benchmarks: a real architecture's tensors with
// seeded random weights, written through GgufWriter. The same seed and shape
// always give the same bytes.
#pragma once

#include <cstdint>
#include <string>

#include <optional>

#include "kernels/weight_type.h"
#include "model/model_config.h"
#include "model/rope_scaling.h"

namespace strata {

class GgufWriter;

struct RandomModelOptions {
  ModelConfig config;  // arch and shape; n_vocab must match the tokenizer
  WeightType type = WeightType::kF32;  // for weight matrices; norms and biases stay F32
  uint64_t seed = 0;
  std::string name = "strata-random";
  // Written as rope_freqs.weight; config.has_rope_freqs must be set with it.
  std::optional<Llama3RopeScaling> rope_scaling;
};

// Writes the hyperparameters as GGUF metadata (llama.cpp's key names).
void write_model_config(GgufWriter& writer, const ModelConfig& config);

// Adds general.* and hyperparameter metadata and every tensor of the
// architecture. A matrix whose rows do not split into blocks of `type` is
// written in the closest type that fits (q8_0, else f16), as llama.cpp does;
// returns how many tensors fell back that way.
int add_random_model(GgufWriter& writer, const RandomModelOptions& options);

}  // namespace strata
