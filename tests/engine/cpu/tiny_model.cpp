#include "tiny_model.h"

#include <algorithm>
#include <random>

#include "common/check.h"
#include "dev/random_model.h"
#include "engine/kv_sizing.h"
#include "model/gguf/gguf_writer.h"
#include "model/model_config.h"

namespace strata::testing {
namespace {

std::vector<std::byte> build_gguf(const TinyModelOptions& options) {
  GgufWriter writer;
  RandomModelOptions random{.config = tiny_config(options),
                            .type = options.type,
                            .seed = options.seed,
                            .rope_scaling = std::nullopt};  // own factors below: all distinct
  add_random_model(writer, random);
  if (options.rope_freqs) {
    // Factors from 1 to 8 across the pairs, like Llama 3's low-to-high scaling.
    const int64_t n_pairs = random.config.head_dim / 2;
    std::vector<float> factors(static_cast<size_t>(n_pairs));
    for (int64_t i = 0; i < n_pairs; ++i) {
      factors[static_cast<size_t>(i)] = 1.0f + 7.0f * static_cast<float>(i) / (n_pairs - 1);
    }
    writer.add_tensor("rope_freqs.weight", {static_cast<uint64_t>(n_pairs)}, WeightType::kF32,
                      factors);
  }
  return writer.serialize();
}

}  // namespace

ModelConfig tiny_config(const TinyModelOptions& options) {
  const Architecture arch = options.arch;
  ModelConfig c{
      .arch = arch,
      .context_length = 512,
      .n_embd = options.n_embd,
      .n_layers = 2,
      .n_heads = 4,
      .n_kv_heads = 2,
      .head_dim = arch == Architecture::kQwen3 ? 32 : options.n_embd / 4,
      .n_ffn = options.n_ffn,
      .n_vocab = 77,
      .rms_norm_eps = 1e-6f,
      .rope_freq_base = arch == Architecture::kLlama ? 10000.0f : 1000000.0f,
      .rope_ordering = arch == Architecture::kLlama ? RopeOrdering::kNormal : RopeOrdering::kNeox,
      .tied_output = options.tied};
  return c;
}

TinyModel::TinyModel(const TinyModelOptions& options)
    : bytes(build_gguf(options)),
      file(GgufFile::parse(bytes)),
      config(read_model_config(file)),
      weights(file, config) {}

Harness::Harness(const TinyModel& model, WeightType kv_dtype, int64_t block_tokens,
                 int64_t n_blocks, int n_threads)
    : layout(kv_layout_for(model.config, block_tokens, kv_dtype)),
      blocks(layout.block_bytes(), n_blocks),
      threads(n_threads),
      backend(model.weights, layout, blocks, threads) {}

BatchSequence TestSequence::next(int64_t n_new, bool all_logits) {
  STRATA_CHECK(n_past + n_new <= static_cast<int64_t>(tokens.size()));
  BatchSequence batch{.tokens = std::span<const int32_t>(tokens).subspan(
                          static_cast<size_t>(n_past), static_cast<size_t>(n_new)),
                      .n_past = n_past,
                      .block_table = block_table,
                      .all_logits = all_logits};
  n_past += n_new;
  return batch;
}

std::vector<BlockId> allocate_blocks(BlockPool& pool, int64_t n, uint64_t shuffle_seed) {
  std::vector<BlockId> ids;
  for (int64_t i = 0; i < n; ++i) {
    std::optional<BlockId> id = pool.allocate();
    STRATA_CHECK(id.has_value(), "test pool too small");
    ids.push_back(*id);
  }
  if (shuffle_seed != 0) std::shuffle(ids.begin(), ids.end(), std::mt19937_64(shuffle_seed));
  return ids;
}

std::vector<int32_t> random_tokens(int64_t n, int64_t n_vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % static_cast<uint64_t>(n_vocab));
  return tokens;
}

}  // namespace strata::testing
