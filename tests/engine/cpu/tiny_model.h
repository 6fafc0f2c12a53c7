// Tiny random models and a backend harness for the CPU backend's tests.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/thread_pool.h"
#include "engine/cpu/cpu_backend.h"
#include "kernels/kv_layout.h"
#include "kernels/weight_type.h"
#include "model/gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "tiering/block_pool.h"

namespace strata::testing {

struct TinyModelOptions {
  Architecture arch = Architecture::kLlama;
  bool tied = false;
  bool rope_freqs = false;  // add rope_freqs.weight (Llama 3 style factors)
  WeightType type = WeightType::kF32;
  uint64_t seed = 1;
  int64_t n_embd = 64;  // 256 lets K-quant rows (super-blocks of 256) be used
  int64_t n_ffn = 96;
};

// The shape every test uses: 2 layers, GQA (4 query heads over 2 kv heads),
// and for qwen3 a head_dim (32) that is not n_embd / n_heads.
ModelConfig tiny_config(const TinyModelOptions& options);

// A GGUF built in memory and bound. Not movable: the weights view the bytes.
struct TinyModel {
  explicit TinyModel(const TinyModelOptions& options);
  TinyModel(const TinyModel&) = delete;
  TinyModel& operator=(const TinyModel&) = delete;

  std::vector<std::byte> bytes;
  GgufFile file;
  ModelConfig config;
  ModelWeights weights;
};

// A backend over its own pool of KV blocks.
struct Harness {
  Harness(const TinyModel& model, WeightType kv_dtype, int64_t block_tokens = 8,
          int64_t n_blocks = 64, int n_threads = 2);

  KvLayout layout;
  BlockPool blocks;
  ThreadPool threads;
  CpuBackend backend;
};

// A sequence driven step by step: its tokens and a block table that covers
// all of them from the start.
struct TestSequence {
  std::vector<int32_t> tokens;  // the whole sequence
  std::vector<BlockId> block_table;
  int64_t n_past = 0;  // tokens already run

  // The BatchSequence for the next n_new tokens (views into this object);
  // advances n_past.
  BatchSequence next(int64_t n_new, bool all_logits);
};

// n blocks from the pool; in a seeded random order when shuffle_seed != 0.
std::vector<BlockId> allocate_blocks(BlockPool& pool, int64_t n, uint64_t shuffle_seed = 0);

// Pseudo-random token ids in [0, n_vocab).
std::vector<int32_t> random_tokens(int64_t n, int64_t n_vocab, uint64_t seed);

}  // namespace strata::testing
