// The `strata` command line end to end: make-model writes real files for every
// architecture and tokenizer, info and tokenize read them back.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/strata_command.h"

namespace {

using strata::testing::CommandResult;
using strata::testing::run_strata;
using strata::testing::run_strata_dev;

std::string temp_model(const std::string& name) { return strata::testing::test_model_path(name); }

CommandResult run(const std::string& args) { return run_strata(args); }

struct ModelCase {
  const char* arch;
  const char* tokenizer;
  const char* type;
  const char* tool_call_syntax;  // of the tokenizer's chat template, or of ChatML without one
  bool has_chat_template;
  int vocab_size;
};

class MakeModelTest : public testing::TestWithParam<ModelCase> {};

TEST_P(MakeModelTest, WritesModelThatInfoDescribes) {
  const ModelCase& c = GetParam();
  std::string path =
      temp_model(std::string("cli_") + c.arch + "_" + c.tokenizer + "_" + c.type + ".gguf");
  CommandResult made =
      run_strata_dev(std::string("make-model --arch ") + c.arch + " --tokenizer " + c.tokenizer +
          " --hidden 256 --layers 2 --heads 4 --kv-heads 2 --ffn 512 --ctx 1024 --type " + c.type +
          " --seed 7 -o " + path);
  ASSERT_EQ(made.exit_code, 0) << made.errors;

  CommandResult info = run("info --json " + path);
  ASSERT_EQ(info.exit_code, 0) << info.errors;
  nlohmann::json j = nlohmann::json::parse(info.output);
  EXPECT_EQ(j["arch"], c.arch);
  EXPECT_EQ(j["context_length"], 1024);
  EXPECT_EQ(j["n_layers"], 2);
  EXPECT_EQ(j["n_heads"], 4);
  EXPECT_EQ(j["n_kv_heads"], 2);
  EXPECT_EQ(j["head_dim"], 64);
  EXPECT_EQ(j["vocab_size"], c.vocab_size);
  EXPECT_FALSE(j.contains("chat_format"));
  EXPECT_EQ(j["chat_template_bytes"].get<int>() > 0, c.has_chat_template);
  EXPECT_EQ(j["tool_call_syntax"], c.tool_call_syntax);
  EXPECT_TRUE(j["reasoning_syntax"].is_string());
  EXPECT_EQ(j["kv_bytes_per_token"], 2 * 2 * 2 * 64 * 2);
  EXPECT_TRUE(j["tensor_types"].contains(c.type)) << j["tensor_types"].dump();
  EXPECT_TRUE(j["tensor_types"].contains("f32"));  // norms stay f32
  // embedding + output (256 x vocab each) + per layer (4 attn matrices + 3 ffn + 2 norms) + final
  // norm
  uint64_t attn = 256 * 256 + 2 * 256 * 128 + 256 * 256;
  uint64_t ffn = 3 * 256 * 512;
  uint64_t expected = 2ull * 256 * c.vocab_size + 2 * (attn + ffn + 2 * 256) + 256;
  if (std::string(c.arch) == "qwen2") expected += 2 * (256 + 128 + 128);  // q, k, v biases
  if (std::string(c.arch) == "qwen3") expected += 2 * (64 + 64);          // q, k norms
  EXPECT_EQ(j["params"], expected);

  // The same seed gives the same bytes.
  std::string again = path + ".again.gguf";
  ASSERT_EQ(run_strata_dev(std::string("make-model --arch ") + c.arch + " --tokenizer " +
                           c.tokenizer +
                           " --hidden 256 --layers 2 --heads 4 --kv-heads 2 --ffn 512 --ctx 1024"
                           " --type " + c.type + " --seed 7 -o " + again)
                .exit_code,
            0);
  EXPECT_EQ(strata::testing::read_file(path), strata::testing::read_file(again));
  std::filesystem::remove(again);
}

INSTANTIATE_TEST_SUITE_P(
    ArchTokenizerType, MakeModelTest,
    // The llama2 npm tokenizer has no chat template: ChatML is assumed.
    testing::Values(ModelCase{"llama", "llama2", "q4_k", "none", false, 32000},
                    ModelCase{"llama", "llama3", "q8_0", "none", true, 128256},
                    ModelCase{"qwen2", "qwen3", "q6_k", "hermes", true, 151669},
                    ModelCase{"qwen3", "qwen3", "q5_k", "hermes", true, 151669},
                    ModelCase{"llama", "llama2", "q4_0", "none", false, 32000},
                    ModelCase{"qwen3", "llama2", "bf16", "none", false, 32000},
                    ModelCase{"llama", "llama2", "f16", "none", false, 32000}));

TEST(CliTest, ChatTemplateFileReplacesTheTokenizers) {
  std::string path = temp_model("cli_llama2_template.gguf");
  std::string tmpl = std::string(STRATA_SOURCE_DIR) + "/tests/data/chat_templates/qwen3.jinja";
  CommandResult made =
      run_strata_dev("make-model --tokenizer llama2 --chat-template " + tmpl + " -o " + path);
  ASSERT_EQ(made.exit_code, 0) << made.errors;
  CommandResult info = run("info --json " + path);
  ASSERT_EQ(info.exit_code, 0) << info.errors;
  nlohmann::json j = nlohmann::json::parse(info.output);
  EXPECT_EQ(j["chat_template_bytes"], strata::testing::read_file(tmpl).size());
  EXPECT_EQ(j["tool_call_syntax"], "hermes");
  EXPECT_EQ(j["reasoning_syntax"], "think-tags");

  CommandResult text = run("info " + path);
  ASSERT_EQ(text.exit_code, 0) << text.errors;
  const std::string line = "chat template    " +
                           std::to_string(j["chat_template_bytes"].get<int>()) +
                           " bytes, tool calls hermes, reasoning think-tags\n";
  EXPECT_NE(text.output.find(line), std::string::npos)
      << text.output;
  std::string plain = temp_model("cli_llama2_no_template.gguf");
  ASSERT_EQ(run_strata_dev("make-model --tokenizer llama2 -o " + plain).exit_code, 0);
  CommandResult none = run("info " + plain);
  ASSERT_EQ(none.exit_code, 0) << none.errors;
  EXPECT_NE(none.output.find("chat template    none (ChatML assumed)"), std::string::npos)
      << none.output;
}

TEST(CliTest, TokenizePrintsIdsAsJsonArray) {
  std::string path = temp_model("cli_tokenize_llama3.gguf");
  ASSERT_EQ(run_strata_dev("make-model --tokenizer llama3 -o " + path).exit_code, 0);
  CommandResult plain = run("tokenize " + path + " 'Hello world<|eot_id|>'");
  ASSERT_EQ(plain.exit_code, 0) << plain.errors;
  nlohmann::json ids = nlohmann::json::parse(plain.output);
  ASSERT_TRUE(ids.is_array());
  // "Hello", " world", then the special token's text split as plain text. (The npm
  // Llama 3 tokenizer.json adds no BOS, so neither do we.)
  EXPECT_EQ(ids[0], 9906);
  EXPECT_EQ(ids[1], 1917);
  EXPECT_GT(ids.size(), 3u);
  CommandResult special = run("tokenize --special " + path + " 'Hello world<|eot_id|>'");
  ASSERT_EQ(special.exit_code, 0) << special.errors;
  EXPECT_EQ(nlohmann::json::parse(special.output), nlohmann::json::parse("[9906, 1917, 128009]"));
}

TEST(CliTest, BadInputGivesClearErrors) {
  CommandResult missing = run("info /nonexistent.gguf");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.errors.find("/nonexistent.gguf"), std::string::npos) << missing.errors;

  std::string not_gguf = temp_model("not_a_model.gguf");
  FILE* f = fopen(not_gguf.c_str(), "wb");
  fputs("this is not a gguf file at all", f);
  fclose(f);
  CommandResult bad = run("info " + not_gguf);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.errors.find("magic"), std::string::npos) << bad.errors;

  CommandResult bad_type = run_strata_dev("make-model --type q3_k -o " + temp_model("never.gguf"));
  EXPECT_NE(bad_type.exit_code, 0);
  EXPECT_NE(bad_type.errors.find("--type q3_k"), std::string::npos) << bad_type.errors;
}

}  // namespace

namespace {

TEST(CliTest, DevicesListsGpusOrSaysWhyNone) {
  CommandResult r = run("devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  nlohmann::json j = nlohmann::json::parse(r.output);
  ASSERT_TRUE(j["cuda_built"].is_boolean());
  ASSERT_TRUE(j["devices"].is_array());
  if (j["devices"].empty()) {
    EXPECT_FALSE(j["unavailable_reason"].get<std::string>().empty());
  }
}

}  // namespace
