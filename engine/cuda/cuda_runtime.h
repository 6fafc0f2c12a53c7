// CudaRuntime: a loaded model on one NVIDIA GPU — the weights uploaded once,
// the KV arena (T0) sized from the VRAM left, the host BlockPool that mirrors
// it for the disk tier, and the CudaBackend over them.
#pragma once

#include <memory>
#include <string>

#include "engine/cuda/cuda_backend.h"
#include "engine/cuda/cuda_model_weights.h"
#include "engine/model_runtime.h"
#include "kernels/gpu_devices.h"

namespace strata {

class CudaRuntime final : public ModelRuntime {
 public:
  // Throws CudaError when the weights or the smallest KV cache do not fit.
  CudaRuntime(const LoadedModel& model, const RuntimeOptions& options, int device);

  Backend& backend() override { return *backend_; }
  BlockPool& kv_blocks() override { return *kv_blocks_; }
  const KvLayout& kv_layout() const override { return layout_; }
  std::string description() const override;
  BlockMirror* block_mirror() override { return backend_.get(); }
  bool on_gpu() const override { return true; }

 private:
  GpuDevice device_;
  KvLayout layout_;
  CudaModelWeights weights_;
  std::unique_ptr<BlockPool> kv_blocks_;  // host mirror; ids are arena slots
  std::unique_ptr<CudaBackend> backend_;
};

}  // namespace strata
