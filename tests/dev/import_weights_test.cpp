// strata-dev import-weights' pieces: the safetensors reader, the HF -> GGUF
// Q/K row permutation, and a whole import of a tiny checkpoint written here
// (F32 and BF16 tensors, the llama2 tokenizer from tools/node), read back with
// the GGUF loader and the model loader.
#include "dev/hf_weights_import.h"
#include "dev/safetensors_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dev/hf_tokenizer_import.h"
#include "kernels/cpu/quantize.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/loaded_model.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

struct TestTensor {
  std::vector<uint64_t> shape;
  std::vector<float> values;
  bool bf16 = false;  // stored as BF16 (values are then exactly representable)
};

uint16_t to_bf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return static_cast<uint16_t>(bits >> 16);  // values here are exact in bf16: no rounding
}

void write_safetensors(const std::string& path, const std::map<std::string, TestTensor>& tensors) {
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
  std::string data;
  for (const auto& [name, t] : tensors) {
    const size_t begin = data.size();
    for (float v : t.values) {
      if (t.bf16) {
        const uint16_t h = to_bf16(v);
        data.append(reinterpret_cast<const char*>(&h), 2);
      } else {
        data.append(reinterpret_cast<const char*>(&v), 4);
      }
    }
    header[name] = {{"dtype", t.bf16 ? "BF16" : "F32"}, {"shape", t.shape},
                    {"data_offsets", {begin, data.size()}}};
  }
  const std::string text = header.dump();
  const uint64_t n = text.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << text << data;
}

// llama.cpp's permute() inverted, as tools/hf_goldens/make_goldens.py undoes
// it: GGUF row (h, i, j) -> HF row (h, j, i) over reshape(n_head, hd/2, 2, in).
std::vector<float> unpermute(const std::vector<float>& rows, int64_t n_heads, int64_t head_dim,
                             int64_t row_length) {
  std::vector<float> out(rows.size());
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t j = 0; j < 2; ++j)
        std::copy_n(rows.data() + (h * head_dim + 2 * i + j) * row_length, row_length,
                    out.data() + (h * head_dim + j * half + i) * row_length);
  return out;
}

TEST(PermuteRopeRows, InterleavesTheHalvesOfEachHead) {
  // Two heads of head_dim 4, rows of length 1: HF [a0 a1 b0 b1] per head
  // (first half a, second half b) -> GGUF pairs (a0 b0) (a1 b1).
  const std::vector<float> hf = {0, 1, 2, 3, 10, 11, 12, 13};
  EXPECT_EQ(permute_rope_rows(hf, 2, 4, 1), (std::vector<float>{0, 2, 1, 3, 10, 12, 11, 13}));
}

TEST(PermuteRopeRows, IsUndoneByTheGoldensUnpermute) {
  std::vector<float> rows(3 * 8 * 5);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i);
  EXPECT_EQ(unpermute(permute_rope_rows(rows, 3, 8, 5), 3, 8, 5), rows);
}

class ImportWeightsTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(STRATA_BINARY_DIR) / "test-models" / "import_weights_test";
    fs::create_directories(dir_);
    tokenizer_ = resolve_hf_tokenizer_dir("llama2");
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    // Values rounded to bf16 so the BF16 tensors hold them exactly.
    auto values = [&](uint64_t n) {
      std::vector<float> v(n);
      for (float& x : v) {
        uint32_t bits;
        x = normal(rng);
        std::memcpy(&bits, &x, 4);
        bits &= 0xFFFF0000u;
        std::memcpy(&x, &bits, 4);
      }
      return v;
    };
    auto add = [&](const std::string& name, std::vector<uint64_t> shape, bool bf16 = false) {
      uint64_t n = 1;
      for (uint64_t d : shape) n *= d;
      tensors_[name] = {shape, values(n), bf16};
    };
    add("model.embed_tokens.weight", {kVocab, kHidden}, /*bf16=*/true);
    add("lm_head.weight", {kVocab, kHidden});
    add("model.norm.weight", {kHidden});
    for (int layer = 0; layer < kLayers; ++layer) {
      const std::string p = "model.layers." + std::to_string(layer) + ".";
      add(p + "input_layernorm.weight", {kHidden});
      add(p + "post_attention_layernorm.weight", {kHidden});
      add(p + "self_attn.q_proj.weight", {kHeads * kHeadDim, kHidden}, /*bf16=*/true);
      add(p + "self_attn.k_proj.weight", {kKvHeads * kHeadDim, kHidden});
      add(p + "self_attn.v_proj.weight", {kKvHeads * kHeadDim, kHidden});
      add(p + "self_attn.o_proj.weight", {kHidden, kHeads * kHeadDim});
      add(p + "mlp.gate_proj.weight", {kFfn, kHidden});
      add(p + "mlp.up_proj.weight", {kFfn, kHidden});
      add(p + "mlp.down_proj.weight", {kHidden, kFfn});
    }
    nlohmann::json config = {
        {"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},
        {"vocab_size", kVocab}, {"hidden_size", kHidden}, {"intermediate_size", kFfn},
        {"num_hidden_layers", kLayers}, {"num_attention_heads", kHeads},
        {"num_key_value_heads", kKvHeads}, {"head_dim", kHeadDim},
        {"max_position_embeddings", 256}, {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0},
        {"rope_scaling", nullptr}, {"tie_word_embeddings", false}};
    std::ofstream(dir_ / "config.json") << config.dump(1);
  }

  // Imports the checkpoint (one file, or split in two shards) as `type`.
  std::string import(WeightType type, bool sharded = false) {
    fs::path weights = dir_ / "weights";
    fs::remove_all(weights);
    fs::create_directories(weights);
    if (sharded) {
      std::map<std::string, TestTensor> a, b;
      for (const auto& [name, t] : tensors_)
        (name.find("layers.1.") == std::string::npos ? a : b)[name] = t;
      write_safetensors((weights / "model-00001-of-00002.safetensors").string(), a);
      write_safetensors((weights / "model-00002-of-00002.safetensors").string(), b);
    } else {
      write_safetensors((weights / "model.safetensors").string(), tensors_);
    }
    GgufWriter writer;
    for (auto& [key, value] : import_hf_tokenizer(tokenizer_)) writer.set(key, std::move(value));
    const ModelConfig config = read_hf_llama_config((dir_ / "config.json").string());
    add_hf_llama_weights(writer, config, SafetensorsReader(weights.string()), type);
    const std::string path = (dir_ / "imported.gguf").string();
    writer.write(path);
    return path;
  }

  std::vector<float> read_tensor(const GgufFile& file, const std::string& name) {
    const GgufTensorInfo* info = file.find_tensor(name);
    EXPECT_NE(info, nullptr) << name;
    if (info == nullptr) return {};
    std::vector<float> out(info->n_elems);
    dequantize(info->type, info->data, out);
    return out;
  }

  static constexpr int64_t kVocab = 32000;  // the llama2 tokenizer's
  static constexpr int64_t kHidden = 64, kLayers = 2, kHeads = 4, kKvHeads = 2, kHeadDim = 16;
  static constexpr int64_t kFfn = 96;
  fs::path dir_;
  std::string tokenizer_;
  std::map<std::string, TestTensor> tensors_;
};

TEST_F(ImportWeightsTest, F32ImportReproducesEveryTensor) {
  const GgufFile file = GgufFile::open(import(WeightType::kF32));
  EXPECT_EQ(file.tensors().size(), 3 + 9 * kLayers);
  EXPECT_EQ(read_tensor(file, "token_embd.weight"), tensors_["model.embed_tokens.weight"].values);
  EXPECT_EQ(read_tensor(file, "output.weight"), tensors_["lm_head.weight"].values);
  EXPECT_EQ(read_tensor(file, "output_norm.weight"), tensors_["model.norm.weight"].values);
  for (int layer = 0; layer < kLayers; ++layer) {
    const std::string g = "blk." + std::to_string(layer) + ".";
    const std::string h = "model.layers." + std::to_string(layer) + ".";
    EXPECT_EQ(unpermute(read_tensor(file, g + "attn_q.weight"), kHeads, kHeadDim, kHidden),
              tensors_[h + "self_attn.q_proj.weight"].values);
    EXPECT_EQ(unpermute(read_tensor(file, g + "attn_k.weight"), kKvHeads, kHeadDim, kHidden),
              tensors_[h + "self_attn.k_proj.weight"].values);
    EXPECT_NE(read_tensor(file, g + "attn_q.weight"),
              tensors_[h + "self_attn.q_proj.weight"].values);
    // Imported as they are: (GGUF name, Hugging Face name) within the layer.
    const std::pair<const char*, const char*> copied[] = {
        {"attn_v.weight", "self_attn.v_proj.weight"},
        {"attn_output.weight", "self_attn.o_proj.weight"},
        {"ffn_gate.weight", "mlp.gate_proj.weight"},
        {"ffn_up.weight", "mlp.up_proj.weight"},
        {"ffn_down.weight", "mlp.down_proj.weight"},
        {"attn_norm.weight", "input_layernorm.weight"},
        {"ffn_norm.weight", "post_attention_layernorm.weight"}};
    for (const auto& [gguf_name, hf_name] : copied) {
      EXPECT_EQ(read_tensor(file, g + gguf_name), tensors_[h + hf_name].values) << g + gguf_name;
    }
  }
  EXPECT_EQ(*file.find_string("general.architecture"), "llama");
  EXPECT_EQ(file.find_uint("llama.attention.head_count_kv"), uint64_t{kKvHeads});
}

TEST_F(ImportWeightsTest, Q8_0ImportFromShardsLoadsAsAModel) {
  const std::string path = import(WeightType::kQ8_0, /*sharded=*/true);
  const std::unique_ptr<LoadedModel> model = LoadedModel::open(path);
  EXPECT_EQ(model->config().n_layers, kLayers);
  EXPECT_EQ(model->config().n_kv_heads, kKvHeads);
  EXPECT_FALSE(model->config().tied_output);
  const GgufFile file = GgufFile::open(path);
  EXPECT_EQ(file.find_tensor("blk.1.ffn_down.weight")->type, WeightType::kQ8_0);
  EXPECT_EQ(file.find_tensor("blk.1.ffn_norm.weight")->type, WeightType::kF32);
  // Q8_0: each value within half a step of its block's scale (max |x| / 127),
  // plus the rounding of that scale to f16 (relative 2^-11, times up to 127 steps).
  const std::vector<float> got = read_tensor(file, "blk.1.ffn_down.weight");
  const std::vector<float>& want = tensors_["model.layers.1.mlp.down_proj.weight"].values;
  ASSERT_EQ(got.size(), want.size());
  for (size_t block = 0; block < want.size(); block += 32) {
    float max_abs = 0;
    for (size_t i = block; i < block + 32; ++i) max_abs = std::max(max_abs, std::abs(want[i]));
    for (size_t i = block; i < block + 32; ++i) {
      ASSERT_NEAR(got[i], want[i], max_abs * (0.5f / 127.0f + 1.0f / 1024.0f)) << i;
    }
  }
}

TEST_F(ImportWeightsTest, TiedCheckpointWritesNoOutputTensor) {
  tensors_.erase("lm_head.weight");
  nlohmann::json config = nlohmann::json::parse(std::ifstream(dir_ / "config.json"));
  config["tie_word_embeddings"] = true;
  std::ofstream(dir_ / "config.json") << config.dump();
  const std::unique_ptr<LoadedModel> model = LoadedModel::open(import(WeightType::kF16));
  EXPECT_TRUE(model->config().tied_output);
}

TEST_F(ImportWeightsTest, MissingAndLeftOverTensorsAreErrors) {
  const TestTensor q = tensors_["model.layers.0.self_attn.q_proj.weight"];
  tensors_.erase("model.layers.0.self_attn.q_proj.weight");
  EXPECT_THROW(import(WeightType::kF32), std::runtime_error);
  tensors_["model.layers.0.self_attn.q_proj.weight"] = q;
  tensors_["model.layers.0.self_attn.q_proj.bias"] = {{kHeads * kHeadDim},
                                                      std::vector<float>(kHeads * kHeadDim)};
  EXPECT_THROW(import(WeightType::kF32), std::runtime_error);
}

TEST(SafetensorsReader, RejectsDataOutsideTheFile) {
  const fs::path path = fs::path(STRATA_BINARY_DIR) / "test-models" / "bad.safetensors";
  fs::create_directories(path.parent_path());
  const std::string header = R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})";
  const uint64_t n = header.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << std::string(8, '\0');  // 8 of the 16 bytes
  out.close();
  EXPECT_THROW(SafetensorsReader(path.string()), std::runtime_error);
}

}  // namespace
}  // namespace strata
