// ModelRuntime: what it takes to run a loaded model on one backend — the
// backend, the KV block pool the engine allocates from, and where the blocks
// really live. make_runtime picks the backend: CUDA when this build has it
// and a GPU runs its kernels, else the CPU (BackendChoice overrides).
//
// The LoadedModel must outlive the runtime. Threads: build on any thread;
// then the engine thread drives backend() (Engine's rules).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/backend.h"
#include "kernels/kv_layout.h"
#include "model/loaded_model.h"
#include "tiering/block_pool.h"
#include "tiering/device_copier.h"

namespace strata {

enum class BackendChoice { kAuto, kCpu, kCuda };

// "auto", "cpu" or "cuda"; throws std::invalid_argument for anything else.
BackendChoice parse_backend(std::string_view name);

struct RuntimeOptions {
  // The model's KV block layout (kv_layout_for: built once, by the engine).
  KvLayout kv_layout{};
  // KV capacity in blocks of block_tokens tokens: on the CPU exactly this;
  // on a GPU at most n_kv_blocks_gpu (0: n_kv_blocks), and at most what fits
  // in vram_cache_fraction of the VRAM left once the weights are loaded.
  int64_t n_kv_blocks = 0;
  int64_t n_kv_blocks_gpu = 0;
  // On a GPU, the pinned host tier (T1) below the VRAM arena, in blocks
  // (0: n_kv_blocks). The CPU computes in host memory: no separate T1.
  int64_t n_host_blocks = 0;
  int n_threads = 0;  // CPU: 0 is one per available core
  BackendChoice backend = BackendChoice::kAuto;
  double vram_cache_fraction = 0.9;
};

class ModelRuntime {
 public:
  virtual ~ModelRuntime() = default;

  virtual Backend& backend() = 0;
  virtual BlockPool& kv_blocks() = 0;
  virtual const KvLayout& kv_layout() const = 0;
  // One line for the log: "CPU: 16 threads, avx2" / "CUDA: NVIDIA H200 (sm_90) ...".
  virtual std::string description() const = 0;
  // Non-null when blocks are computed in device memory: the copy stream
  // between the VRAM arena and the pinned host tier (EngineOptions).
  virtual DeviceCopier* device_copier() { return nullptr; }
  virtual BlockPool* host_blocks() { return nullptr; }
  virtual bool on_gpu() const { return false; }
};

// Throws std::runtime_error when `options.backend` is kCuda and no GPU can be
// used (the message says why), or when the model does not fit.
std::unique_ptr<ModelRuntime> make_runtime(const LoadedModel& model, const RuntimeOptions& options);

// The CUDA runtime on GPU `device`; throws when this build has no CUDA backend.
std::unique_ptr<ModelRuntime> make_cuda_runtime(const LoadedModel& model,
                                                const RuntimeOptions& options, int device);

}  // namespace strata
