#include "model/model_weights.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dev/random_model.h"
#include "kernels/cpu/quantize.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/model_tensors.h"
#include "tiny_model.h"

namespace strata::testing {
namespace {

// A qwen2 model whose tensors come from model_tensor_specs, with one tensor
// replaced (or dropped) to provoke an error.
struct Mutation {
  std::string name;
  bool drop = false;
  std::vector<uint64_t> dims = {};  // replacement dims, when not dropped
  WeightType type = WeightType::kF32;
};

std::vector<std::byte> model_bytes(const ModelConfig& config, const Mutation& mutation) {
  GgufWriter writer;
  write_model_config(writer, config);
  for (const TensorSpec& spec : model_tensor_specs(config)) {
    if (spec.name != mutation.name) {
      uint64_t n = 1;
      for (uint64_t d : spec.dims) n *= d;
      writer.add_tensor(spec.name, spec.dims, WeightType::kF32, std::vector<float>(n, 0.25f));
    } else if (!mutation.drop) {
      uint64_t n = 1;
      for (uint64_t d : mutation.dims) n *= d;
      if (weight_type_info(mutation.type).supported) {
        writer.add_tensor(spec.name, mutation.dims, mutation.type, std::vector<float>(n, 0.5f));
      } else {
        writer.add_tensor_bytes(spec.name, mutation.dims, mutation.type,
                                std::vector<std::byte>(*weight_bytes(mutation.type, n)));
      }
    }
  }
  return writer.serialize();
}

std::string load_error(const ModelConfig& config, const Mutation& mutation) {
  std::vector<std::byte> bytes = model_bytes(config, mutation);
  GgufFile file = GgufFile::parse(bytes);
  try {
    ModelWeights weights(file, read_model_config(file));
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelWeightsTest, BindsEveryTensorInPlace) {
  TinyModel model({.arch = Architecture::kQwen2, .tied = false});
  const ModelWeights& w = model.weights;
  ASSERT_EQ(w.layers().size(), 2u);
  const LayerWeights& l = w.layers()[1];
  const GgufTensorInfo* q = model.file.find_tensor("blk.1.attn_q.weight");
  EXPECT_EQ(l.wq.data, q->data.data());  // a view into the file, not a copy
  EXPECT_EQ(l.wq.n_rows, 64);
  EXPECT_EQ(l.wq.row_length, 64);
  EXPECT_EQ(l.wk.n_rows, 32);  // 2 kv heads x 16
  EXPECT_EQ(l.w_down.n_rows, 64);
  EXPECT_EQ(l.w_down.row_length, 96);
  EXPECT_EQ(l.bq.size(), 64u);
  EXPECT_EQ(l.bk.size(), 32u);
  EXPECT_TRUE(l.q_norm.empty());
  EXPECT_EQ(w.output().data, model.file.find_tensor("output.weight")->data.data());
  EXPECT_TRUE(w.rope_freqs().empty());

  TinyModel tied({.arch = Architecture::kQwen3, .tied = true});
  EXPECT_EQ(tied.weights.output().data, tied.weights.token_embd().data);
  EXPECT_EQ(tied.weights.layers()[0].q_norm.size(), 32u);
  EXPECT_TRUE(tied.weights.layers()[0].bq.empty());
}

TEST(ModelWeightsTest, EmbedDequantizesOnlyTheRowsAskedFor) {
  TinyModel model({.arch = Architecture::kLlama, .type = WeightType::kQ8_0});
  const GgufTensorInfo* embd = model.file.find_tensor("token_embd.weight");
  ASSERT_EQ(embd->type, WeightType::kQ8_0);
  std::vector<float> all(embd->n_elems);
  dequantize(embd->type, embd->data, all);
  std::vector<int32_t> tokens = {76, 0, 13, 13};
  std::vector<float> out(4 * 64);
  model.weights.embed(tokens, out);
  for (size_t t = 0; t < tokens.size(); ++t) {
    for (size_t i = 0; i < 64; ++i) {
      EXPECT_EQ(out[t * 64 + i], all[static_cast<size_t>(tokens[t]) * 64 + i]);
    }
  }
}

TEST(ModelWeightsTest, RejectsMissingMisshapenAndUnsupportedTensors) {
  const ModelConfig c = tiny_config({.arch = Architecture::kQwen2});
  EXPECT_EQ(load_error(c, {.name = "none"}), "");
  EXPECT_NE(load_error(c, {.name = "blk.1.attn_v.bias", .drop = true})
                .find("lacks tensor 'blk.1.attn_v.bias' [32]"),
            std::string::npos);
  EXPECT_NE(load_error(c, {.name = "blk.0.ffn_up.weight", .dims = {64, 95}})
                .find("'blk.0.ffn_up.weight' has shape [64, 95], expected [64, 96]"),
            std::string::npos);
  EXPECT_NE(
      load_error(c, {.name = "blk.0.attn_q.weight", .dims = {64, 64}, .type = WeightType::kQ5_1})
          .find("type q5_1, which Strata cannot compute with"),
      std::string::npos);
  // A declared rope_freqs.weight of the wrong length.
  std::vector<std::byte> bytes = model_bytes(c, {.name = "none"});
  GgufFile file = GgufFile::parse(bytes);
  ModelConfig with_freqs = read_model_config(file);
  with_freqs.has_rope_freqs = true;
  EXPECT_THROW(ModelWeights(file, with_freqs), ModelError);
}

// A block_count far beyond the file's tensors (found by model_load_fuzzer):
// refused before a tensor list for a billion layers is built.
TEST(ModelWeightsTest, RefusesABlockCountTheTensorsCannotHold) {
  const ModelConfig c = tiny_config({.arch = Architecture::kLlama});
  std::vector<std::byte> bytes = model_bytes(c, {.name = "none"});
  GgufFile file = GgufFile::parse(bytes);
  ModelConfig lying = read_model_config(file);
  lying.n_layers = int64_t{1} << 30;
  try {
    ModelWeights weights(file, lying);
    FAIL() << "a billion layers were accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("block_count is 1073741824"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::testing
