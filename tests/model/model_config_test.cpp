#include "model/model_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/model_tensors.h"

namespace strata {
namespace {

// A metadata-and-embedding-only GGUF: enough for read_model_config.
std::vector<std::byte> model_file(const std::string& arch, uint32_t n_heads, uint32_t n_kv,
                                  bool with_output) {
  GgufWriter writer;
  writer.set("general.architecture", arch);
  writer.set(arch + ".context_length", uint32_t{4096});
  writer.set(arch + ".embedding_length", uint32_t{64});
  writer.set(arch + ".block_count", uint32_t{3});
  writer.set(arch + ".feed_forward_length", uint32_t{160});
  writer.set(arch + ".attention.head_count", n_heads);
  writer.set(arch + ".attention.head_count_kv", n_kv);
  writer.set(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
  writer.set(arch + ".rope.freq_base", 1000000.0f);
  std::vector<float> embd(64 * 10, 0.5f);
  writer.add_tensor("token_embd.weight", {64, 10}, WeightType::kF32, embd);
  if (with_output) writer.add_tensor("output.weight", {64, 10}, WeightType::kF32, embd);
  return writer.serialize();
}

TEST(ModelConfigTest, ReadsHyperparameters) {
  std::vector<std::byte> bytes = model_file("qwen2", 8, 2, true);
  ModelConfig c = read_model_config(GgufFile::parse(bytes));
  EXPECT_EQ(c.arch, Architecture::kQwen2);
  EXPECT_EQ(c.context_length, 4096);
  EXPECT_EQ(c.n_embd, 64);
  EXPECT_EQ(c.n_layers, 3);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.n_ffn, 160);
  EXPECT_EQ(c.n_vocab, 10);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c.rope_freq_base, 1e6f);
  EXPECT_EQ(c.rope_ordering, RopeOrdering::kNeox);
  EXPECT_FALSE(c.tied_output);
  // 3 layers x (K and V) x 2 kv heads x 8 dims x 2 bytes
  EXPECT_EQ(c.kv_bytes_per_token(), 3 * 2 * 2 * 8 * 2);
}

TEST(ModelConfigTest, MissingOutputMeansTiedHead) {
  std::vector<std::byte> bytes = model_file("llama", 4, 4, false);
  ModelConfig c = read_model_config(GgufFile::parse(bytes));
  EXPECT_TRUE(c.tied_output);
  EXPECT_EQ(c.rope_ordering, RopeOrdering::kNormal);
}

TEST(ModelConfigTest, RejectsUnknownArchitectureAndBadGqa) {
  std::vector<std::byte> gemma = model_file("gemma", 4, 4, true);
  try {
    read_model_config(GgufFile::parse(gemma));
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported architecture 'gemma'"), std::string::npos);
  }
  std::vector<std::byte> bad_gqa = model_file("llama", 8, 3, true);
  EXPECT_THROW(read_model_config(GgufFile::parse(bad_gqa)), ModelError);
}

// Heads x head_dim sizes the Q matrix; each factor alone within bounds, the
// product would overflow int64 (found by model_load_fuzzer).
TEST(ModelConfigTest, RejectsHeadsTimesHeadDimBeyondAnyModel) {
  GgufWriter writer;
  writer.set("general.architecture", "llama");
  writer.set("llama.context_length", uint32_t{4096});
  writer.set("llama.embedding_length", uint32_t{64});
  writer.set("llama.block_count", uint32_t{1});
  writer.set("llama.feed_forward_length", uint32_t{160});
  writer.set("llama.attention.head_count", uint32_t{4294967294});
  writer.set("llama.attention.head_count_kv", uint32_t{1});
  writer.set("llama.attention.key_length", uint32_t{4294967294});
  writer.add_tensor("token_embd.weight", {64, 10}, WeightType::kF32,
                    std::vector<float>(64 * 10, 0.5f));
  std::vector<std::byte> bytes = writer.serialize();
  try {
    read_model_config(GgufFile::parse(bytes));
    FAIL() << "the product was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("head_count x key_length"), std::string::npos)
        << e.what();
  }
}

TEST(ModelConfigTest, RejectsMoreHeadsThanEmbeddingDimensions) {
  // Found by the model_load fuzzer: no key_length, so head_dim = 64 / 100 = 0.
  GgufWriter writer;
  writer.set("general.architecture", "llama");
  writer.set("llama.context_length", uint32_t{4096});
  writer.set("llama.embedding_length", uint32_t{64});
  writer.set("llama.block_count", uint32_t{1});
  writer.set("llama.feed_forward_length", uint32_t{160});
  writer.set("llama.attention.head_count", uint32_t{100});
  writer.add_tensor("token_embd.weight", {64, 10}, WeightType::kF32,
                    std::vector<float>(64 * 10, 0.5f));
  std::vector<std::byte> bytes = writer.serialize();
  try {
    read_model_config(GgufFile::parse(bytes));
    FAIL() << "a head dimension of 0 was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("head dimension would be 0"), std::string::npos)
        << e.what();
  }
}

TEST(ModelTensorsTest, ListsArchitectureSpecificTensors) {
  ModelConfig c{.arch = Architecture::kQwen3, .n_embd = 64, .n_layers = 2, .n_heads = 4,
                .n_kv_heads = 2, .head_dim = 32, .n_ffn = 96, .n_vocab = 100};
  std::vector<TensorSpec> specs = model_tensor_specs(c);
  auto find = [&](const std::string& name) -> const TensorSpec* {
    for (const TensorSpec& s : specs) {
      if (s.name == name) return &s;
    }
    return nullptr;
  };
  ASSERT_NE(find("blk.1.attn_q_norm.weight"), nullptr);
  EXPECT_EQ(find("blk.1.attn_q_norm.weight")->dims, (std::vector<uint64_t>{32}));
  EXPECT_EQ(find("blk.0.attn_q.weight")->dims, (std::vector<uint64_t>{64, 128}));
  EXPECT_EQ(find("blk.0.attn_k.weight")->dims, (std::vector<uint64_t>{64, 64}));
  EXPECT_EQ(find("blk.0.attn_output.weight")->dims, (std::vector<uint64_t>{128, 64}));
  EXPECT_EQ(find("blk.0.ffn_down.weight")->dims, (std::vector<uint64_t>{96, 64}));
  EXPECT_EQ(find("blk.0.attn_q.bias"), nullptr);
  EXPECT_NE(find("output.weight"), nullptr);
  EXPECT_EQ(specs.size(), 1 + 2 * 11 + 2u);

  c.arch = Architecture::kQwen2;
  c.tied_output = true;
  specs = model_tensor_specs(c);
  EXPECT_NE(find("blk.0.attn_v.bias"), nullptr);
  EXPECT_EQ(find("output.weight"), nullptr);
}

}  // namespace
}  // namespace strata
