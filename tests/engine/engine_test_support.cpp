#include "tests/engine/engine_test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "dev/hf_tokenizer_import.h"
#include "dev/random_model.h"
#include "engine/cpu/cpu_runtime.h"
#include "engine/kv_sizing.h"
#include "engine/model_fingerprint.h"
#include "model/gguf/gguf_writer.h"

namespace strata::testing {

const LoadedModel& test_model() {
  static std::unique_ptr<LoadedModel> model = [] {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("strata_engine_test_" +
                                                   std::to_string(::getpid()) + ".gguf"))
            .string();
    GgufWriter writer;
    int64_t n_vocab = 0;
    for (auto& [key, value] : import_hf_tokenizer(resolve_hf_tokenizer_dir("llama2"))) {
      if (key == "tokenizer.ggml.tokens")
        n_vocab = static_cast<int64_t>(value.as_array()->items.size());
      writer.set(key, std::move(value));
    }
    ModelConfig c;
    c.arch = Architecture::kLlama;
    c.n_embd = 64;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.head_dim = 16;
    c.n_ffn = 128;
    c.context_length = kTestContext;
    c.n_vocab = n_vocab;
    c.rms_norm_eps = 1e-5f;
    c.rope_freq_base = 10000.0f;
    add_random_model(writer, RandomModelOptions{.config = c,
                                                .type = WeightType::kF32,
                                                .seed = 7,
                                                .name = "engine-test",
                                                .rope_scaling = std::nullopt});
    writer.write(path);
    std::unique_ptr<LoadedModel> loaded = LoadedModel::open(path);
    std::filesystem::remove(path);
    return loaded;
  }();
  return *model;
}

EventCallback Collector::callback(int index) {
  return [this, index](const EngineEvent& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    Outcome& out = outcomes_[index];
    EXPECT_FALSE(out.finish.has_value()) << "event after the final one";
    out.tokens.insert(out.tokens.end(), event.token_ids.begin(), event.token_ids.end());
    out.logprobs.insert(out.logprobs.end(), event.logprobs.begin(), event.logprobs.end());
    out.text += event.text;
    ++out.n_events;
    if (event.finish) {
      out.finish = event.finish;
      out.usage = event.usage;
      ++n_finished_;
      done_.notify_all();
    }
  };
}

std::map<int, Outcome> Collector::wait(int n) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool ok = done_.wait_for(lock, std::chrono::minutes(5), [&] { return n_finished_ >= n; });
  EXPECT_TRUE(ok) << "requests did not finish";
  return outcomes_;
}

std::vector<TokenId> random_prompt(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<TokenId> id(3, 31999);  // no control tokens
  std::vector<TokenId> prompt(static_cast<size_t>(n));
  for (TokenId& t : prompt) t = id(rng);
  return prompt;
}

GenerateRequest request_for(int i, int64_t n_prompt, int64_t max_tokens, bool sampled) {
  GenerateRequest r;
  r.prompt = random_prompt(n_prompt, 1000 + static_cast<uint64_t>(i));
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  r.sampling.temperature = sampled ? 0.8f : 0.0f;
  r.sampling.seed = static_cast<uint64_t>(i) + 1;
  return r;
}

void DiskTierTest::SetUp() {
  dir_ = std::filesystem::temp_directory_path() /
         ("strata_engine_disk_tier_" + std::to_string(::getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir_);
}

void DiskTierTest::TearDown() { std::filesystem::remove_all(dir_); }

std::unique_ptr<DiskWorker> DiskTierTest::open_disk_tier(bool persist) {
  CpuRuntime probe(test_model(),
                   CpuRuntimeOptions{.kv_layout = kv_layout_for(test_model().config()),
                                     .n_kv_blocks = 1, .n_threads = 1});
  return std::make_unique<DiskWorker>(DiskTierOptions{
      .dir = dir_, .block_bytes = probe.kv_layout().block_bytes(),
      .capacity_bytes = int64_t{64} << 20, .model = test_fingerprint(probe), .persist = persist});
}

ModelFingerprint test_fingerprint(const ModelRuntime& runtime) {
  return model_fingerprint(test_model().file(), runtime.kv_layout());
}

EngineUnderTest::EngineUnderTest(const EngineSetup& setup)
    : runtime_(make_runtime(test_model(), RuntimeOptions{.kv_layout = kv_layout_for(
                                                             test_model().config()),
                                                         .n_kv_blocks = setup.n_kv_blocks,
                                                         .n_host_blocks = setup.n_host_blocks,
                                                         .n_threads = 2,
                                                         .backend = setup.backend})) {
  SchedulerOptions scheduler = setup.scheduler;
  scheduler.model_fingerprint = test_fingerprint(*runtime_);
  DeviceCopier* copier = runtime_->device_copier();
  BlockPool* host_blocks = runtime_->host_blocks();
  if (setup.n_host_blocks > 0 && copier == nullptr) {
    BlockPool& compute = runtime_->kv_blocks();
    host_blocks_ = std::make_unique<BlockPool>(compute.block_bytes(), setup.n_host_blocks);
    copier_ = std::make_unique<ThreadCopier>(compute.memory(), compute.slot_bytes(),
                                             compute.block_bytes());
    copier = copier_.get();
    host_blocks = host_blocks_.get();
  }
  engine_ = std::make_unique<Engine>(
      runtime_->backend(), runtime_->kv_blocks(), test_model().tokenizer(),
      EngineOptions{.scheduler = scheduler, .check_integrity = true, .on_step = setup.on_step,
                    .disk_tier = setup.disk_tier, .device_copier = copier,
                    .host_blocks = host_blocks, .load_cost = setup.load_cost});
}

EngineUnderTest::~EngineUnderTest() {
  shut_down();
  EXPECT_EQ(runtime_->kv_blocks().n_free(), runtime_->kv_blocks().n_total());
  runtime_->kv_blocks().check_integrity();
  if (BlockPool* host = host_blocks_ ? host_blocks_.get() : runtime_->host_blocks()) {
    EXPECT_EQ(host->n_free(), host->n_total());
    host->check_integrity();
  }
}

EngineStats EngineUnderTest::shut_down() {
  if (engine_) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    do {
      last_stats_ = engine_->stats();
      if (last_stats_.n_running + last_stats_.n_waiting == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } while (std::chrono::steady_clock::now() < deadline);
    engine_.reset();
  }
  return last_stats_;
}

Outcome run_one(EngineUnderTest& e, const GenerateRequest& request) {
  Collector c;
  e.engine().submit(request, c.callback(0));
  return c.wait(1)[0];
}

std::vector<Outcome> run_alone(const std::vector<GenerateRequest>& requests,
                               const SchedulerOptions& scheduler, BackendChoice backend) {
  EngineUnderTest e(EngineSetup{.scheduler = scheduler, .backend = backend});
  std::vector<Outcome> outcomes;
  for (const GenerateRequest& r : requests) outcomes.push_back(run_one(e, r));
  return outcomes;
}

std::map<int, Outcome> run_together(EngineUnderTest& e,
                                    const std::vector<GenerateRequest>& requests) {
  Collector c;
  for (size_t i = 0; i < requests.size(); ++i) {
    e.engine().submit(requests[i], c.callback(static_cast<int>(i)));
  }
  return c.wait(static_cast<int>(requests.size()));
}

}  // namespace strata::testing
