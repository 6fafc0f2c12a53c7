// ModelHost: the model the server runs, loaded on a thread of its own so that
// HTTP can answer (/health: loading) while a large file is read. Once ready,
// the model, the CPU runtime and the Engine stay until the host is destroyed.
//
// Threads: any thread may call state(); the accessors of a ready host may be
// called from any thread once state() has returned kReady (the objects are
// published with release/acquire and do not change afterwards).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "engine/model_runtime.h"
#include "engine/engine.h"
#include "engine/model/loaded_model.h"
#include "kernels/weight_type.h"
#include "tiering/tier_worker.h"

namespace strata {

struct ModelHostOptions {
  std::string model_path;
  int64_t context_length = 0;  // 0: the model's; otherwise at most this
  // Host KV tier; 0: room for max_running full contexts, at most kDefaultHostCacheCap.
  int64_t host_cache_bytes = 0;
  int64_t max_running = 64;
  int64_t max_batch_tokens = 512;
  WeightType kv_type = WeightType::kF16;
  int64_t block_tokens = KvLayout::kDefaultBlockTokens;
  int threads = 0;  // 0: all cores
  BackendChoice backend = BackendChoice::kAuto;
  double vram_cache_fraction = 0.9;
  // Disk KV tier: the model's blocks go to a folder of cache_dir named for
  // its fingerprint. "" disables it; so does a folder that cannot be used
  // (with a warning: serving goes on without it).
  std::string cache_dir{};
  int64_t disk_cache_bytes = int64_t{16} << 30;
  bool persist = true;  // write full blocks through to disk

  static constexpr int64_t kDefaultHostCacheCap = int64_t{2} << 30;
};

class ModelHost {
 public:
  enum class State { kLoading, kReady, kFailed };

  explicit ModelHost(ModelHostOptions options);
  // Starts loading, once. `on_done` runs on the loading thread when it ends,
  // with an empty string on success or the reason it failed.
  void start(std::function<void(const std::string& error)> on_done);
  // Waits for the loading thread, then stops the engine (every request still
  // running gets its cancelled event).
  ~ModelHost();
  ModelHost(const ModelHost&) = delete;
  ModelHost& operator=(const ModelHost&) = delete;

  State state() const { return state_.load(std::memory_order_acquire); }

  // Ready only.
  const LoadedModel& model() const { return *model_; }
  Engine& engine() const { return *engine_; }
  // What a request may use: the model's context, capped by the option and
  // by the KV cache (one sequence must fit in it).
  int64_t context_length() const { return context_length_; }
  int64_t kv_blocks_total() const { return kv_blocks_total_; }
  int64_t kv_block_tokens() const { return runtime_->kv_layout().block_tokens; }
  int64_t kv_block_bytes() const { return runtime_->kv_layout().block_bytes(); }
  // The disk tier, or nullptr when there is none.
  const TierWorker* disk_tier() const { return disk_tier_.get(); }

 private:
  void load(const std::function<void(const std::string&)>& on_done);
  void open_disk_tier(const KvLayout& layout, const ModelFingerprint& fingerprint);

  const ModelHostOptions options_;
  std::unique_ptr<LoadedModel> model_;
  std::unique_ptr<ModelRuntime> runtime_;
  std::unique_ptr<TierWorker> disk_tier_;  // outlives the engine, which writes through to it
  std::unique_ptr<Engine> engine_;
  int64_t context_length_ = 0;
  int64_t kv_blocks_total_ = 0;
  std::atomic<State> state_{State::kLoading};
  std::thread loader_;
};

}  // namespace strata
