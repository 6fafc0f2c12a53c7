// CudaRuntime: a loaded model on one NVIDIA GPU — the weights uploaded once,
// the KV arena (T0) sized from the VRAM left (its BlockIds named by a
// BlockPool whose own bytes are never touched), the CudaBackend over them,
// and the pinned host tier (T1) with the copy stream between the two.
#pragma once

#include <memory>
#include <string>

#include "engine/cuda/cuda_backend.h"
#include "engine/cuda/cuda_model_weights.h"
#include "engine/model_runtime.h"
#include "gpu/cuda_block_copier.h"
#include "gpu/gpu_devices.h"
#include "gpu/host_registration.h"

namespace strata {

class CudaRuntime final : public ModelRuntime {
 public:
  // Throws CudaError when the weights or the smallest KV cache do not fit.
  CudaRuntime(const LoadedModel& model, const RuntimeOptions& options, int device);

  Backend& backend() override { return *backend_; }
  BlockPool& kv_blocks() override { return *kv_blocks_; }
  const KvLayout& kv_layout() const override { return layout_; }
  std::string description() const override;
  DeviceCopier* device_copier() override { return copier_.get(); }
  BlockPool* host_blocks() override { return host_blocks_.get(); }
  bool on_gpu() const override { return true; }

 private:
  GpuDevice device_;
  KvLayout layout_;
  CudaModelWeights weights_;
  std::unique_ptr<BlockPool> kv_blocks_;  // names the arena's slots
  std::unique_ptr<CudaBackend> backend_;
  std::unique_ptr<BlockPool> host_blocks_;  // T1
  std::unique_ptr<HostRegistration> host_pinning_;
  std::unique_ptr<CudaBlockCopier> copier_;
};

}  // namespace strata
