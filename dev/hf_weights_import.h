// Converts a Hugging Face Llama checkpoint (config.json + safetensors) into
// GGUF tensors and hyperparameters, as llama.cpp's convert_hf_to_gguf.py does
// for LlamaForCausalLM: HF names map to GGUF names (model.layers.N.self_attn.
// q_proj.weight -> blk.N.attn_q.weight, ...), and the rows of Q and K are
// permuted because HF rotates the two halves of each head while GGUF's llama
// RoPE rotates adjacent pairs. For `strata-dev import-weights`; runs on the
// command line's thread.
#pragma once

#include <string>
#include <vector>

#include "kernels/weight_type.h"
#include "model/model_config.h"

namespace strata {

class GgufWriter;
class SafetensorsReader;

// The llama ModelConfig a config.json describes. Throws std::runtime_error
// for another architecture, a missing key, RoPE scaling, or a shape that
// does not split into heads.
ModelConfig read_hf_llama_config(const std::string& config_json_path);

// llama.cpp's permute(): HF's rows of one head, [first half | second half] of
// the rotary dimensions, reordered to interleaved pairs (0, half, 1, half + 1,
// ...). `rows` is n_heads * head_dim rows of `row_length` floats.
std::vector<float> permute_rope_rows(const std::vector<float>& rows, int64_t n_heads,
                                     int64_t head_dim, int64_t row_length);

// Adds the hyperparameters and every tensor `config` needs to `writer`:
// matrices in `type` (or the closest type that fits their rows), norms in F32.
// Throws std::runtime_error naming a tensor that is missing, has the wrong
// shape, or is left over (a checkpoint holding what a plain Llama has not).
void add_hf_llama_weights(GgufWriter& writer, const ModelConfig& config,
                          const SafetensorsReader& weights, WeightType type);

}  // namespace strata
