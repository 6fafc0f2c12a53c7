// CpuRuntime: what it takes to run a loaded model on the CPU — the thread
// pool, the KV block pool (the T1 tier: plain page-aligned RAM) and the
// backend over them, built in the order they depend on each other.
// The LoadedModel must outlive it.
#pragma once

#include <cstdint>
#include <string>

#include "common/thread_pool.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/model_runtime.h"
#include "kernels/kv_layout.h"
#include "model/loaded_model.h"
#include "tiering/block_pool.h"

namespace strata {

struct CpuRuntimeOptions {
  KvLayout kv_layout{};     // the model's (kv_layout_for)
  int64_t n_kv_blocks = 0;  // KV capacity, in blocks of kv_layout.block_tokens tokens
  int n_threads = 0;        // 0: one per available core
};

class CpuRuntime final : public ModelRuntime {
 public:
  CpuRuntime(const LoadedModel& model, const CpuRuntimeOptions& options);

  Backend& backend() override { return backend_; }
  BlockPool& kv_blocks() override { return kv_blocks_; }
  const KvLayout& kv_layout() const override { return layout_; }
  std::string description() const override;
  ThreadPool& threads() { return threads_; }

 private:
  ThreadPool threads_;
  KvLayout layout_;
  BlockPool kv_blocks_;
  CpuBackend backend_;
};

}  // namespace strata
