// The `strata` command line end to end: make-model writes real files for every
// architecture and tokenizer, info and tokenize read them back.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout
  std::string errors;  // stderr
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CommandResult run(const std::string& args) {
  const std::string stderr_path =
      (std::filesystem::temp_directory_path() / ("strata_cli_test_" + std::to_string(getpid()))).string();
  std::string command = std::string(STRATA_BINARY_DIR) + "/service/strata " + args + " 2>" + stderr_path;
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.errors = read_file(stderr_path);
  std::filesystem::remove(stderr_path);
  return result;
}

std::string temp_model(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(STRATA_BINARY_DIR) / "test-models";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

struct ModelCase {
  const char* arch;
  const char* tokenizer;
  const char* type;
  const char* chat_format;
  int vocab_size;
};

class MakeModelTest : public testing::TestWithParam<ModelCase> {};

TEST_P(MakeModelTest, WritesModelThatInfoDescribes) {
  const ModelCase& c = GetParam();
  std::string path = temp_model(std::string("cli_") + c.arch + "_" + c.tokenizer + "_" + c.type + ".gguf");
  CommandResult made = run(std::string("dev make-model --arch ") + c.arch + " --tokenizer " + c.tokenizer +
                           " --hidden 256 --layers 2 --heads 4 --kv-heads 2 --ffn 512 --ctx 1024 --type " +
                           c.type + " --seed 7 -o " + path);
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
  EXPECT_EQ(j["chat_format"], c.chat_format);
  EXPECT_EQ(j["kv_bytes_per_token"], 2 * 2 * 2 * 64 * 2);
  EXPECT_TRUE(j["tensor_types"].contains(c.type)) << j["tensor_types"].dump();
  EXPECT_TRUE(j["tensor_types"].contains("f32"));  // norms stay f32
  // embedding + output (256 x vocab each) + per layer (4 attn matrices + 3 ffn + 2 norms) + final norm
  uint64_t attn = 256 * 256 + 2 * 256 * 128 + 256 * 256;
  uint64_t ffn = 3 * 256 * 512;
  uint64_t expected = 2ull * 256 * c.vocab_size + 2 * (attn + ffn + 2 * 256) + 256;
  if (std::string(c.arch) == "qwen2") expected += 2 * (256 + 128 + 128);  // q, k, v biases
  if (std::string(c.arch) == "qwen3") expected += 2 * (64 + 64);          // q, k norms
  EXPECT_EQ(j["params"], expected);

  // The same seed gives the same bytes.
  std::string again = path + ".again.gguf";
  ASSERT_EQ(run(std::string("dev make-model --arch ") + c.arch + " --tokenizer " + c.tokenizer +
                " --hidden 256 --layers 2 --heads 4 --kv-heads 2 --ffn 512 --ctx 1024 --type " + c.type +
                " --seed 7 -o " + again)
                .exit_code,
            0);
  EXPECT_EQ(std::filesystem::file_size(path), std::filesystem::file_size(again));
  std::filesystem::remove(again);
}

INSTANTIATE_TEST_SUITE_P(
    ArchTokenizerType, MakeModelTest,
    // The llama2 npm tokenizer has no chat template: chatml is the fallback.
    testing::Values(ModelCase{"llama", "llama2", "q4_k", "chatml", 32000},
                    ModelCase{"llama", "llama3", "q8_0", "llama3", 128256},
                    ModelCase{"qwen2", "qwen3", "q6_k", "chatml", 151669},
                    ModelCase{"qwen3", "qwen3", "q5_k", "chatml", 151669},
                    ModelCase{"llama", "llama2", "q4_0", "chatml", 32000},
                    ModelCase{"qwen3", "llama2", "bf16", "chatml", 32000},
                    ModelCase{"llama", "llama2", "f16", "chatml", 32000}));

TEST(CliTest, ChatTemplateFileReplacesTheTokenizers) {
  std::string path = temp_model("cli_llama2_template.gguf");
  std::string tmpl = std::string(STRATA_SOURCE_DIR) + "/tests/data/chat_templates/llama2.jinja";
  CommandResult made = run("dev make-model --tokenizer llama2 --chat-template " + tmpl + " -o " + path);
  ASSERT_EQ(made.exit_code, 0) << made.errors;
  CommandResult info = run("info --json " + path);
  ASSERT_EQ(info.exit_code, 0) << info.errors;
  EXPECT_EQ(nlohmann::json::parse(info.output)["chat_format"], "llama2");
}

TEST(CliTest, TokenizePrintsIdsAsJsonArray) {
  std::string path = temp_model("cli_tokenize_llama3.gguf");
  ASSERT_EQ(run("dev make-model --tokenizer llama3 -o " + path).exit_code, 0);
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

  CommandResult bad_type = run("dev make-model --type q3_k -o " + temp_model("never.gguf"));
  EXPECT_NE(bad_type.exit_code, 0);
  EXPECT_NE(bad_type.errors.find("--type q3_k"), std::string::npos) << bad_type.errors;
}

}  // namespace
