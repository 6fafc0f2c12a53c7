// ModelHost: the model the server runs, loaded on a thread of its own so that
// HTTP can answer (/health: loading) while a large file is read. Once ready,
// the model and its ModelEngine stay until the host is destroyed.
//
// Threads: any thread may call state(); the accessors of a ready host may be
// called from any thread once state() has returned kReady (the objects are
// published with release/acquire and do not change afterwards).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "engine/model_engine.h"
#include "model/loaded_model.h"
#include "service/server/model_file_guard.h"
#include "tiering/disk_worker.h"

namespace strata {

struct ModelHostOptions {
  std::string model_path;
  std::optional<std::string> chat_template = std::nullopt;  // replaces the model's own (its text)
  ModelEngineOptions engine;
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
  Engine& engine() const { return model_engine_->engine(); }
  // What a request may use: the model's context, capped by the option and
  // by the KV cache (one sequence must fit in it).
  int64_t context_length() const { return model_engine_->context_length(); }
  int64_t kv_blocks_total() const { return model_engine_->kv_blocks_total(); }
  int64_t kv_block_tokens() const { return model_engine_->kv_layout().block_tokens; }
  int64_t kv_block_bytes() const { return model_engine_->kv_layout().block_bytes(); }
  // The disk tier, or nullptr when there is none.
  const DiskWorker* disk_tier() const { return model_engine_->disk_tier(); }

 private:
  void load(const std::function<void(const std::string&)>& on_done);

  const ModelHostOptions options_;
  std::unique_ptr<LoadedModel> model_;
  // From the moment model_'s file is mapped until it is unmapped: a truncation
  // of the file ends the process with a message instead of a core dump.
  std::optional<ModelFileGuard> file_guard_;
  std::unique_ptr<ModelEngine> model_engine_;
  std::atomic<State> state_{State::kLoading};
  std::thread loader_;
};

}  // namespace strata
