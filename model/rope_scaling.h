// Llama 3 RoPE scaling ("rope_type": "llama3" in Hugging Face configs). GGUF
// files carry it as the tensor rope_freqs.weight: one factor per rotated pair,
// by which that pair's frequency is divided. This computes those factors the
// way llama.cpp's converter does, for writing models.
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

struct Llama3RopeScaling {
  float factor = 8.0f;  // Llama 3.1 / 3.2 ship 8 and 32
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  int64_t original_context_length = 8192;
};

// head_dim / 2 factors: 1 for short wavelengths, `factor` for long ones, a
// smooth blend between.
std::vector<float> llama3_rope_factors(const Llama3RopeScaling& scaling, int64_t head_dim,
                                       float freq_base);

}  // namespace strata
