// What the Engine tests share: a tiny random llama (hidden 64, 2 layers, the
// llama2 tokenizer) on the CPU backend (or another), requests of seeded random prompts, a
// collector of their events, and an engine whose pool must be entirely free
// once it is gone.
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/model_runtime.h"
#include "model/loaded_model.h"
#include "tests/tiering/thread_copier.h"
#include "tiering/disk_worker.h"

namespace strata::testing {

inline constexpr int64_t kTestContext = 4352;

// Writes (once per process) and opens the test model.
const LoadedModel& test_model();

// What one request got back.
struct Outcome {
  std::vector<TokenId> tokens;
  std::vector<SampledToken> logprobs;  // when the request asked for them
  std::string text;
  int n_events = 0;
  std::optional<FinishReason> finish;
  Usage usage;
};

// Collects events of many requests; waits for their final events.
class Collector {
 public:
  EventCallback callback(int index);
  std::map<int, Outcome> wait(int n);

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  std::map<int, Outcome> outcomes_;
  int n_finished_ = 0;
};

std::vector<TokenId> random_prompt(int64_t n, uint64_t seed);
GenerateRequest request_for(int i, int64_t n_prompt, int64_t max_tokens, bool sampled = false);

struct EngineSetup {
  int64_t n_kv_blocks = 1024;
  SchedulerOptions scheduler{};
  std::function<void(const StepReport&)> on_step = nullptr;
  DiskWorker* disk_tier = nullptr;
  BackendChoice backend = BackendChoice::kCpu;
  // > 0: a host tier (T1) of this many blocks below the compute tier, as on
  // a GPU. On the CPU backend the "device" is then the CPU's own pool,
  // copied to and from the host tier by a ThreadCopier.
  int64_t n_host_blocks = 0;
  // Tests of the loading machinery always load (no prefill rate is ever
  // observed), so that no outcome depends on timing; the cost model's
  // choice has tests of its own.
  LoadCostOptions load_cost{.min_prefill_tokens = INT64_MAX};
};

// A runtime and an engine over it; the pool must be all free after the engine.
class EngineUnderTest {
 public:
  explicit EngineUnderTest(const EngineSetup& setup);
  ~EngineUnderTest();
  Engine& engine() { return *engine_; }
  const ModelRuntime& runtime() const { return *runtime_; }
  // Waits until no request is left (the stats snapshot is published after a
  // step's events, so a final event can come before its step's stats), then
  // joins the engine thread. Returns the last stats.
  EngineStats shut_down();

 private:
  std::unique_ptr<ModelRuntime> runtime_;
  std::unique_ptr<BlockPool> host_blocks_;     // CPU with a host tier
  std::unique_ptr<ThreadCopier> copier_;       // CPU with a host tier
  std::unique_ptr<Engine> engine_;
  EngineStats last_stats_;
};

// A fresh folder per test (named by process and test) for a disk tier of the
// test model, removed afterwards: the disk-tier engine tests' fixture.
class DiskTierTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // A disk tier (T2) in the folder for CPU engines on the test model.
  std::unique_ptr<DiskWorker> open_disk_tier(bool persist = true);

  std::filesystem::path dir_;
};

// The fingerprint an Engine on the test model with this runtime must use.
ModelFingerprint test_fingerprint(const ModelRuntime& runtime);

// Runs one request on `e` and waits for it.
Outcome run_one(EngineUnderTest& e, const GenerateRequest& request);
// Each request alone, one after another, on a roomy engine.
std::vector<Outcome> run_alone(const std::vector<GenerateRequest>& requests,
                               const SchedulerOptions& scheduler = {},
                               BackendChoice backend = BackendChoice::kCpu);
std::map<int, Outcome> run_together(EngineUnderTest& e,
                                    const std::vector<GenerateRequest>& requests);

}  // namespace strata::testing
