#include "model/loaded_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/str_cat.h"
#include "dev/random_model.h"
#include "model/gguf/gguf_writer.h"
#include "model/tokenizer/tokenizer_keys.h"

namespace strata {
namespace {

// A one-layer llama whose embedding has `n_rows` rows and whose SentencePiece
// vocabulary has `n_tokens` tokens, written to a file of its own.
class LoadedModelTest : public testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write_model(int64_t n_tokens, int64_t n_rows) {
    GgufWriter writer;
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    while (static_cast<int64_t>(tokens.size()) < n_tokens) {
      tokens.push_back(str_cat("t", tokens.size()));
    }
    writer.set(tokenizer_keys::kModel, "llama");
    writer.set(tokenizer_keys::kTokens, GgufValue::string_array(tokens));
    ModelConfig c;
    c.arch = Architecture::kLlama;
    c.context_length = 32;
    c.n_embd = 8;
    c.n_layers = 1;
    c.n_heads = 2;
    c.n_kv_heads = 2;
    c.head_dim = 4;
    c.n_ffn = 16;
    c.n_vocab = n_rows;
    add_random_model(writer, {.config = c, .type = WeightType::kF32, .seed = 1,
                              .name = "loaded-model-test", .rope_scaling = std::nullopt});
    std::filesystem::create_directories(dir_);
    const std::string path = (dir_ / str_cat(n_tokens, "-", n_rows, ".gguf")).string();
    writer.write(path);
    return path;
  }

  const std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / str_cat("strata_loaded_model_test_", ::getpid());
};

TEST_F(LoadedModelTest, OpensAModelWhoseTokenizerIsItsEmbedding) {
  const auto model = LoadedModel::open(write_model(12, 12));
  EXPECT_EQ(model->config().n_vocab, 12);
  EXPECT_EQ(model->tokenizer().n_vocab(), 12);
}

// A token without an embedding row, or a row (a token the model may sample)
// without a token to print, would fail a check mid-request; such a file is
// refused when it opens (found by model_load_fuzzer).
TEST_F(LoadedModelTest, RefusesATokenizerOfAnotherSize) {
  for (const auto& [n_tokens, n_rows] : {std::pair{14, 7}, std::pair{7, 14}}) {
    const std::string path = write_model(n_tokens, n_rows);
    try {
      LoadedModel::open(path);
      ADD_FAILURE() << n_tokens << " tokens over " << n_rows << " rows were accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(str_cat("the tokenizer has ", n_tokens, " tokens")),
                std::string::npos)
          << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace strata
