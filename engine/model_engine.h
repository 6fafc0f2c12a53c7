// ModelEngine: a loaded model made ready to generate — everything built once
// per model, in order: the KV block layout and the model fingerprint that
// names its blocks, the runtime (backend and block pools, sized by the KV
// sizing policy), the disk tier in a folder named for the fingerprint, and
// the Engine over them. `strata serve`, `run` and `bench` all generate
// through one: a single prompt is an Engine with one request.
//
// Threads: build and destroy on one thread; engine() then follows Engine's
// rules (any thread may submit).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "engine/model_runtime.h"
#include "kernels/kv_layout.h"
#include "kernels/weight_type.h"
#include "model/loaded_model.h"
#include "tiering/block_hash.h"
#include "tiering/disk_worker.h"

namespace strata {

struct ModelEngineOptions {
  int64_t context_length = 0;  // 0: the model's; otherwise at most this
  int64_t max_running = 64;    // sequences decoding at once
  int64_t max_batch_tokens = 512;  // tokens of one forward pass (prefill chunks, decodes)
  // KV blocks the backend computes in; 0: the sizing policy's (engine/kv_sizing.h).
  int64_t n_kv_blocks = 0;
  // Host KV tier; 0: room for max_running full contexts, at most kDefaultHostCacheCap.
  int64_t host_cache_bytes = 0;
  WeightType kv_type = WeightType::kF16;
  int64_t block_tokens = KvLayout::kDefaultBlockTokens;
  int threads = 0;  // CPU: 0 is one per available core
  BackendChoice backend = BackendChoice::kAuto;
  double vram_cache_fraction = 0.9;
  // Disk KV tier: the model's blocks go to a folder of cache_dir named for
  // its fingerprint. "" disables it; so does a folder that cannot be used
  // (with a warning: generating goes on without it).
  std::string cache_dir{};
  int64_t disk_cache_bytes = int64_t{16} << 30;
  bool persist = true;  // write full blocks through to disk
  // After a failed write, the longest back-off between tries to write again
  // (DiskTierOptions::retry_max).
  std::chrono::milliseconds disk_retry_max = std::chrono::minutes(1);
  // Tests: Scheduler::check_integrity() after every step; each step's report.
  bool check_integrity = false;
  std::function<void(const StepReport&)> on_step = nullptr;
};

class ModelEngine {
 public:
  // `model` must outlive the ModelEngine. Throws std::runtime_error when the
  // backend asked for cannot be used or the model does not fit.
  ModelEngine(const LoadedModel& model, const ModelEngineOptions& options);
  // Stops the engine (requests still running get their cancelled event)
  // before the runtime and the disk tier it uses go.
  ~ModelEngine();
  ModelEngine(const ModelEngine&) = delete;
  ModelEngine& operator=(const ModelEngine&) = delete;

  Engine& engine() const { return *engine_; }
  ModelRuntime& runtime() const { return *runtime_; }
  const KvLayout& kv_layout() const { return layout_; }
  const ModelFingerprint& fingerprint() const { return fingerprint_; }
  // What a request may use: the model's context, capped by the option and by
  // the KV cache (one sequence must fit in it).
  int64_t context_length() const { return engine_->limits().context_length; }
  int64_t kv_blocks_total() const { return engine_->limits().n_kv_blocks; }
  // The disk tier, or nullptr when there is none.
  const DiskWorker* disk_tier() const { return disk_tier_.get(); }

 private:
  void open_disk_tier(const ModelEngineOptions& options);

  const KvLayout layout_;
  const ModelFingerprint fingerprint_;
  std::unique_ptr<ModelRuntime> runtime_;
  std::unique_ptr<DiskWorker> disk_tier_;  // outlives the engine, which writes through to it
  std::unique_ptr<Engine> engine_;
};

}  // namespace strata
