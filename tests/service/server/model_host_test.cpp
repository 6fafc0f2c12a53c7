#include "engine/kv_sizing.h"
#include "service/server/model_host.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>

#include "common/str_cat.h"
#include "kernels/kv_layout.h"
#include "tests/service/server/tiny_model_file.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// Models are written once per process, one per shape, in a folder removed at exit.
class ModelHostTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / str_cat("strata_model_host_test_", ::getpid());
    fs::create_directories(dir_);
    testing::write_tiny_model((dir_ / "ctx2048.gguf").string(), {.context_length = 2048});
    testing::write_tiny_model((dir_ / "ctx8192.gguf").string(), {.context_length = 8192});
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  static std::string model(const std::string& name) { return (dir_ / name).string(); }

  // Starts `host` and waits for on_done; returns what it was given.
  static std::string load(ModelHost& host) {
    std::promise<std::string> done;
    std::future<std::string> result = done.get_future();
    host.start([&done](const std::string& error) { done.set_value(error); });
    if (result.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
      ADD_FAILURE() << "on_done never ran";
      return "(timeout)";
    }
    return result.get();
  }

  static ModelHostOptions options(const std::string& file) {
    return ModelHostOptions{.model_path = model(file), .engine = {.max_running = 4, .threads = 2}};
  }

  static inline fs::path dir_;
};

// KV layout of the tiny models: 2 layers, 2 kv heads of 16, blocks of 16 tokens.
int64_t block_bytes(WeightType kv_type = WeightType::kF16) {
  ModelConfig config;
  config.n_layers = 2;
  config.n_kv_heads = 2;
  config.head_dim = 16;
  return kv_layout_for(config, KvLayout::kDefaultBlockTokens, kv_type).block_bytes();
}

TEST_F(ModelHostTest, LoadingThenReady) {
  ModelHost host(options("ctx2048.gguf"));
  EXPECT_EQ(host.state(), ModelHost::State::kLoading) << "before start";
  std::string error = load(host);
  EXPECT_EQ(error, "");
  ASSERT_EQ(host.state(), ModelHost::State::kReady);
  EXPECT_EQ(host.model().config().context_length, 2048);
  EXPECT_EQ(host.context_length(), 2048);
  // max_running full contexts: 4 * 2048 / 16.
  EXPECT_EQ(host.kv_blocks_total(), 4 * 2048 / 16);
  EXPECT_EQ(host.engine().stats().n_blocks_total, host.kv_blocks_total());

  // The engine runs: a short greedy generation reaches its final event.
  std::mutex mutex;
  std::condition_variable changed;
  bool finished = false;
  EngineEvent last;
  GenerateRequest request{.prompt = {1, 450, 4996}, .max_tokens = 3};
  request.sampling.temperature = 0.0f;
  host.engine().submit(request, [&](const EngineEvent& event) {
    std::lock_guard lock(mutex);
    if (event.finish) {
      finished = true;
      last = event;
      changed.notify_all();
    }
  });
  std::unique_lock lock(mutex);
  ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(60), [&] { return finished; }));
  EXPECT_TRUE(last.finish == FinishReason::kLength || last.finish == FinishReason::kStop);
  EXPECT_EQ(last.usage.prompt_tokens, 3);
}

TEST_F(ModelHostTest, OnDoneRunsAfterTheStateIsSet) {
  ModelHost host(options("ctx2048.gguf"));
  std::promise<ModelHost::State> seen;
  host.start([&](const std::string&) { seen.set_value(host.state()); });
  auto future = seen.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  EXPECT_EQ(future.get(), ModelHost::State::kReady);
}

TEST_F(ModelHostTest, ContextLengthOptionCapsTheModels) {
  ModelHostOptions o = options("ctx8192.gguf");
  o.engine.context_length = 1000;
  ModelHost host(o);
  ASSERT_EQ(load(host), "");
  EXPECT_EQ(host.model().config().context_length, 8192);
  EXPECT_EQ(host.context_length(), 1000);
  EXPECT_EQ(host.kv_blocks_total(), 4 * ((1000 + 15) / 16)) << "KV sized for the capped context";
}

TEST_F(ModelHostTest, ContextLengthOptionAboveTheModelsIsTheModels) {
  ModelHostOptions o = options("ctx2048.gguf");
  o.engine.context_length = 100000;
  ModelHost host(o);
  ASSERT_EQ(load(host), "");
  EXPECT_EQ(host.context_length(), 2048);
}

TEST_F(ModelHostTest, KvCacheMibSizesTheCache) {
  ASSERT_EQ(block_bytes(), 4096);
  ModelHostOptions o = options("ctx2048.gguf");
  o.engine.host_cache_bytes = 3 << 20;
  ModelHost host(o);
  ASSERT_EQ(load(host), "");
  EXPECT_EQ(host.kv_blocks_total(), (int64_t{3} << 20) / block_bytes())
      << "the given size, even above what max_running needs";
  EXPECT_EQ(host.context_length(), 2048);
  EXPECT_EQ(host.engine().stats().n_blocks_total, host.kv_blocks_total());
}

TEST_F(ModelHostTest, SmallKvCacheCapsTheContext) {
  ModelHostOptions o = options("ctx8192.gguf");
  // 256 blocks of 16 tokens: one sequence of at most 4096 tokens.
  o.engine.host_cache_bytes = 1 << 20;
  ModelHost host(o);
  ASSERT_EQ(load(host), "");
  EXPECT_EQ(host.kv_blocks_total(), 256);
  EXPECT_EQ(host.context_length(), 4096);
}

TEST_F(ModelHostTest, KvTypeF32DoublesTheBlock) {
  ASSERT_EQ(block_bytes(WeightType::kF32), 8192);
  ModelHostOptions o = options("ctx8192.gguf");
  o.engine.host_cache_bytes = 1 << 20;
  o.engine.kv_type = WeightType::kF32;
  ModelHost host(o);
  ASSERT_EQ(load(host), "");
  EXPECT_EQ(host.kv_blocks_total(), 128);
  EXPECT_EQ(host.context_length(), 2048);
}

TEST_F(ModelHostTest, MissingFileFailsNamingThePath) {
  const std::string path = model("no-such-model.gguf");
  ModelHostOptions o = options("no-such-model.gguf");
  ModelHost host(o);
  const std::string error = load(host);
  EXPECT_EQ(host.state(), ModelHost::State::kFailed);
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

TEST_F(ModelHostTest, NotAGgufFailsNamingThePath) {
  const std::string path = model("garbage.gguf");
  std::ofstream(path) << std::string(4096, 'x');
  ModelHost host(options("garbage.gguf"));
  const std::string error = load(host);
  EXPECT_EQ(host.state(), ModelHost::State::kFailed);
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

TEST_F(ModelHostTest, NeverStartedOrStillLoadingCanBeDestroyed) {
  { ModelHost never(options("ctx2048.gguf")); }
  {
    ModelHost host(options("ctx2048.gguf"));
    host.start([](const std::string&) {});
  }  // the destructor waits for the loader
}

}  // namespace
}  // namespace strata
