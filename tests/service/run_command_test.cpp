// `strata run` end to end on a small generated model: JSON output, greedy and
// seeded determinism, standard input, chat template (the model's or a file's), clear
// errors, and Ctrl-C.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/strata_command.h"

namespace {

using strata::testing::CommandResult;
using strata::testing::read_file;
using strata::testing::run_shell;

const std::string kStrata = strata::testing::strata_binary();

class RunCommandTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = strata::testing::test_model_path("run_command_qwen3.gguf");
    CommandResult made =
        run_shell(strata::testing::strata_dev_binary() +
                  " make-model --arch qwen3 --tokenizer qwen3 --hidden 128"
                  " --layers 2 --heads 4 --kv-heads 2 --ffn 256 --ctx 256 --type q8_0"
                  " --seed 5 -o " +
                  model_);
    ASSERT_EQ(made.exit_code, 0) << made.errors;
  }

  static nlohmann::json run_json(const std::string& args) {
    CommandResult r = run_shell(kStrata + " run -m " + model_ + " --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.errors;
    return nlohmann::json::parse(r.output);
  }

  static std::string model_;
};

std::string RunCommandTest::model_;

TEST_F(RunCommandTest, JsonHasPromptTokensTextAndSpeeds) {
  nlohmann::json out = run_json("-p 'Hello there' -n 12 --temp 0");
  EXPECT_EQ(out["prompt_tokens"],
            nlohmann::json::parse("[9707, 1052]"));  // Qwen3: "Hello", " there"
  ASSERT_TRUE(out["tokens"].is_array());
  EXPECT_LE(out["tokens"].size(), 12u);
  EXPECT_TRUE(out["text"].is_string());
  EXPECT_GT(out["prefill_tok_s"].get<double>(), 0.0);
  EXPECT_GE(out["decode_tok_s"].get<double>(), 0.0);
}

TEST_F(RunCommandTest, GreedyAndSeededRunsRepeat) {
  EXPECT_EQ(run_json("-p 'Once upon a time' -n 16 --temp 0")["tokens"],
            run_json("-p 'Once upon a time' -n 16 --temp 0 --seed 99")["tokens"]);
  nlohmann::json a = run_json(
      "-p 'Once upon a time' -n 16 --temp 1.5 --top-k 0 --top-p 1 --min-p 0 --seed 7 --ignore-eos");
  nlohmann::json b = run_json(
      "-p 'Once upon a time' -n 16 --temp 1.5 --top-k 0 --top-p 1 --min-p 0 --seed 7 --ignore-eos");
  nlohmann::json c = run_json(
      "-p 'Once upon a time' -n 16 --temp 1.5 --top-k 0 --top-p 1 --min-p 0 --seed 8 --ignore-eos");
  EXPECT_EQ(a["tokens"], b["tokens"]);
  EXPECT_NE(a["tokens"], c["tokens"]);
  EXPECT_EQ(a["tokens"].size(), 16u);
  EXPECT_EQ(a["finish_reason"], "length");
}

TEST_F(RunCommandTest, ReadsPromptFromStandardInputAndAppliesChatFormat) {
  CommandResult r =
      run_shell("printf 'Hi' | " + kStrata + " run -m " + model_ + " --chat -n 4 --json --temp 0");
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  // <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n
  EXPECT_EQ(nlohmann::json::parse(r.output)["prompt_tokens"],
            nlohmann::json::parse("[151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198]"));
}

TEST_F(RunCommandTest, ChatTemplateFileReplacesTheModels) {
  const std::string tmpl = strata::testing::test_model_path("run_command_template.jinja");
  std::ofstream(tmpl) << "{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}";
  nlohmann::json out = run_json("--chat --chat-template " + tmpl + " -p Hi -n 1 --temp 0");
  CommandResult tokens = run_shell(kStrata + " tokenize --no-bos " + model_ + " '[user] Hi'");
  ASSERT_EQ(tokens.exit_code, 0) << tokens.errors;
  EXPECT_EQ(out["prompt_tokens"], nlohmann::json::parse(tokens.output));

  CommandResult missing = run_shell(kStrata + " run -m " + model_ +
                                    " --chat --chat-template /nonexistent.jinja -p Hi -n 1");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.errors.find("cannot read '/nonexistent.jinja'"), std::string::npos)
      << missing.errors;
  std::ofstream(tmpl) << "{% if %}";
  CommandResult broken =
      run_shell(kStrata + " run -m " + model_ + " --chat --chat-template " + tmpl + " -p Hi -n 1");
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.errors.find("the chat template given cannot be run"), std::string::npos)
      << broken.errors;
}

TEST_F(RunCommandTest, StreamsTextAndReportsSpeedsOnStandardError) {
  CommandResult r =
      run_shell(kStrata + " run -m " + model_ + " -p Hello -n 8 --temp 0 --ignore-eos");
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  nlohmann::json greedy = run_json("-p Hello -n 8 --temp 0 --ignore-eos");
  EXPECT_EQ(r.output, greedy["text"].get<std::string>() + "\n");
  EXPECT_NE(r.errors.find("prompt tokens 1, prefill"), std::string::npos) << r.errors;
  EXPECT_NE(r.errors.find("decode"), std::string::npos);
}

TEST_F(RunCommandTest, DefaultMaxTokensFitsTheContext) {
  // 256 tokens by default, but the model's context is 256: it stops at the end.
  nlohmann::json out = run_json("-p 'Hello there' --temp 0 --ignore-eos");
  EXPECT_EQ(out["tokens"].size(), 254u);
  EXPECT_EQ(out["finish_reason"], "length");
}

TEST_F(RunCommandTest, RequestsThatDoNotFitGiveClearErrors) {
  CommandResult too_long = run_shell(kStrata + " run -m " + model_ + " -p Hello -n 1000");
  EXPECT_EQ(too_long.exit_code, 1);
  EXPECT_NE(too_long.errors.find("exceeds the context length (256)"), std::string::npos)
      << too_long.errors;
  CommandResult missing = run_shell(kStrata + " run -m /nonexistent.gguf -p Hello");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.errors.find("/nonexistent.gguf"), std::string::npos) << missing.errors;
  CommandResult bad_temp = run_shell(kStrata + " run -m " + model_ + " -p Hello -n 4 --temp -1");
  EXPECT_EQ(bad_temp.exit_code, 1);
  EXPECT_NE(bad_temp.errors.find("temperature"), std::string::npos) << bad_temp.errors;
}

TEST_F(RunCommandTest, CtrlCStopsGenerationCleanly) {
  // A long context so that generation is certainly still running when the
  // signal comes: 8,000 tokens take many seconds.
  const std::string model = strata::testing::test_model_path("run_command_long_ctx.gguf");
  CommandResult made =
      run_shell(strata::testing::strata_dev_binary() +
                " make-model --hidden 64 --layers 1 --ctx 8192 -o " + model);
  ASSERT_EQ(made.exit_code, 0) << made.errors;
  const std::string err =
      (std::filesystem::temp_directory_path() / "strata_run_test_sigint").string();
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    if (freopen(err.c_str(), "w", stderr) == nullptr) _exit(126);
    execl(kStrata.c_str(), "strata", "run", "-m", model.c_str(), "-p", "Hello", "-n", "8000",
          "--ignore-eos", "--threads", "1", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  // The first streamed text proves generation has started; then interrupt.
  char buffer[256];
  ASSERT_GT(read(out[0], buffer, sizeof buffer), 0);
  kill(pid, SIGINT);
  while (read(out[0], buffer, sizeof buffer) > 0) {
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::string errors = read_file(err);
  EXPECT_NE(errors.find("finish: cancelled"), std::string::npos) << errors;
  std::filesystem::remove(err);
}

}  // namespace
