#include "dev/random_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <vector>

#include "common/log.h"
#include "common/thread_pool.h"
#include "kernels/cpu/quantize.h"
#include "model/gguf/gguf_writer.h"
#include "model/model_tensors.h"

namespace strata {
namespace {

// splitmix64: seeds one stream per tensor from (seed, tensor name), so a
// tensor's values do not depend on which tensors come before it.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t name_hash(const std::string& name) {  // FNV-1a
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

class NormalStream {
 public:
  explicit NormalStream(uint64_t seed) : state_(seed) {}
  float uniform() {  // [0, 1)
    return static_cast<float>(splitmix64(state_) >> 40) * (1.0f / 16777216.0f);
  }
  float normal() {  // Box-Muller, one value per call for simplicity
    float u1 = uniform() + 1.0f / 33554432.0f;
    float u2 = uniform();
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(2.0f * std::numbers::pi_v<float> * u2);
  }

 private:
  uint64_t state_;
};

std::vector<float> random_values(const TensorSpec& spec, uint64_t seed) {
  uint64_t n = 1;
  for (uint64_t d : spec.dims) n *= d;
  NormalStream rng(seed ^ name_hash(spec.name));
  std::vector<float> values(n);
  const bool is_norm = spec.name.find("norm") != std::string::npos;
  if (is_norm) {
    for (float& v : values) v = 0.8f + 0.4f * rng.uniform();  // near 1, as trained norms are
  } else if (spec.role == TensorRole::kVector) {
    for (float& v : values) v = 0.02f * rng.normal();  // biases
  } else {
    // Scale by 1/sqrt(fan_in) so activations neither vanish nor explode.
    const float scale = 1.0f / std::sqrt(static_cast<float>(spec.dims[0]));
    for (float& v : values) v = scale * rng.normal();
  }
  return values;
}

WeightType fitting_type(WeightType wanted, uint64_t row_length) {
  if (row_length % weight_type_info(wanted).block_elems == 0) return wanted;
  if (row_length % weight_type_info(WeightType::kQ8_0).block_elems == 0) return WeightType::kQ8_0;
  return WeightType::kF16;
}

}  // namespace

void write_model_config(GgufWriter& writer, const ModelConfig& c) {
  const std::string arch(architecture_name(c.arch));
  const std::string p = arch + ".";
  auto u32 = [](int64_t v) { return GgufValue(static_cast<uint32_t>(v)); };
  writer.set("general.architecture", arch);
  writer.set(p + "context_length", u32(c.context_length));
  writer.set(p + "embedding_length", u32(c.n_embd));
  writer.set(p + "block_count", u32(c.n_layers));
  writer.set(p + "feed_forward_length", u32(c.n_ffn));
  writer.set(p + "attention.head_count", u32(c.n_heads));
  writer.set(p + "attention.head_count_kv", u32(c.n_kv_heads));
  writer.set(p + "attention.key_length", u32(c.head_dim));
  writer.set(p + "attention.value_length", u32(c.head_dim));
  writer.set(p + "attention.layer_norm_rms_epsilon", c.rms_norm_eps);
  writer.set(p + "rope.freq_base", c.rope_freq_base);
  writer.set(p + "rope.dimension_count", u32(c.head_dim));
  writer.set(p + "vocab_size", u32(c.n_vocab));
}

int add_random_model(GgufWriter& writer, const RandomModelOptions& options) {
  writer.set("general.name", options.name);
  writer.set("general.type", "model");
  write_model_config(writer, options.config);
  // Each tensor has its own random stream, so tensors are made in parallel
  // (largest first) and added in order: the bytes do not depend on the
  // number of threads. An 8B-shaped model takes a minute, not a quarter hour.
  const std::vector<TensorSpec> specs = model_tensor_specs(options.config);
  std::vector<WeightType> types(specs.size(), WeightType::kF32);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].role == TensorRole::kMatrix)
      types[i] = fitting_type(options.type, specs[i].dims[0]);
  }
  auto n_elements = [&](size_t i) {
    uint64_t n = 1;
    for (uint64_t d : specs[i].dims) n *= d;
    return n;
  };
  std::vector<size_t> order(specs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return n_elements(a) > n_elements(b); });
  std::vector<std::vector<std::byte>> encoded(specs.size());
  ThreadPool pool;
  pool.parallel_for(static_cast<int64_t>(specs.size()), [&](int64_t task) {
    const size_t i = order[static_cast<size_t>(task)];
    encoded[i] = quantize(types[i], random_values(specs[i], options.seed));
  });
  int n_fallbacks = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].role == TensorRole::kMatrix && types[i] != options.type) {
      ++n_fallbacks;
      log_info("tensor ", specs[i].name, ": rows of ", specs[i].dims[0], " do not split into ",
               weight_type_name(options.type), " blocks; writing ", weight_type_name(types[i]));
    }
    writer.add_tensor_bytes(specs[i].name, specs[i].dims, types[i], std::move(encoded[i]));
  }
  if (options.rope_scaling) {
    const ModelConfig& c = options.config;
    std::vector<float> factors =
        llama3_rope_factors(*options.rope_scaling, c.head_dim, c.rope_freq_base);
    writer.add_tensor("rope_freqs.weight", {factors.size()}, WeightType::kF32, factors);
  }
  return n_fallbacks;
}

}  // namespace strata
