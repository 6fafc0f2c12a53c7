// The element-wise and per-row operations of a transformer layer, on f32
// activations in row-major buffers: RMSNorm, rotary position embedding (RoPE),
// SwiGLU's silu(gate) * up, softmax and the residual add. Each computes what
// Hugging Face transformers computes in float32 for Llama / Qwen2 / Qwen3.
// Pure functions, any thread; sizes that do not match are bugs (STRATA_CHECK).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata {

// RMSNorm row by row: x holds rows of weight.size() floats (so it normalises
// whole tokens, or the heads of a token for Qwen3's per-head Q/K norm).
//   out = x / sqrt(mean(x^2) + eps) * weight
// out has x's size and may be x itself.
void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
              std::span<float> out);

// Which elements of a head RoPE rotates together as one (re, im) pair.
enum class RopeStyle {
  kNormal,  // (2i, 2i+1): llama as GGUF stores it (the converter permutes Q/K rows)
  kNeox,    // (i, i + head_dim/2): GPT-NeoX / HF's rotate_half; qwen2, qwen3
};

// Inverse frequencies of the head_dim/2 pairs:
//   inv_freq[i] = freq_base^(-2i/head_dim) / freq_factors[i]
// freq_factors: empty (all 1), or head_dim/2 per-pair divisors (GGUF's
// rope_freqs.weight, which encodes Llama 3's long-context scaling).
std::vector<float> rope_inv_freqs(int64_t head_dim, float freq_base,
                                  std::span<const float> freq_factors);

// cos and sin of position * inv_freq[i] for every pair i: the table one
// token's heads share. As HF does, the angle is a float32 product.
void rope_cos_sin(int64_t position, std::span<const float> inv_freqs, std::span<float> cos,
                  std::span<float> sin);

// Rotates, in place, every head of one token's x (n_heads x head_dim floats,
// head_dim = 2 * cos.size()) by the angles of rope_cos_sin:
//   (a, b) -> (a cos - b sin, a sin + b cos)
void rope(std::span<float> x, std::span<const float> cos, std::span<const float> sin,
          RopeStyle style);

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + e^-g). out may alias gate or up.
void silu_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out);

// In-place softmax, stable for large values (the maximum is subtracted first).
void softmax(std::span<float> x);

// acc[i] += x[i]: the residual connection.
void add_in_place(std::span<float> acc, std::span<const float> x);

}  // namespace strata
