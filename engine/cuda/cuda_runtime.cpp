#include "engine/cuda/cuda_runtime.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "common/log.h"
#include "common/str_cat.h"
#include "gpu/cuda_check.h"

namespace strata {
namespace {

GpuDevice select_device(int device) {
  STRATA_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  STRATA_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return GpuDevice{.index = device, .name = prop.name, .compute_major = prop.major,
                   .compute_minor = prop.minor,
                   .memory_bytes = static_cast<uint64_t>(prop.totalGlobalMem),
                   .multiprocessors = prop.multiProcessorCount};
}

// VRAM kept out of the KV arena for activations, cuBLAS and the dequantized
// f16 copy of the largest matrix that a prefill multiplies by.
int64_t working_reserve(const ModelConfig& c) {
  const int64_t largest = std::max({c.n_vocab * c.n_embd, c.n_ffn * c.n_embd,
                                    c.n_heads * c.head_dim * c.n_embd});
  return 2 * largest + (int64_t{1} << 30);
}

int64_t kv_blocks_in_vram(const ModelConfig& config, const KvLayout& layout,
                          const RuntimeOptions& options) {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  STRATA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double usable = std::max(0.0, static_cast<double>(free_bytes) -
                                           static_cast<double>(working_reserve(config)));
  const auto fitting = static_cast<int64_t>(usable * options.vram_cache_fraction /
                                            static_cast<double>(CudaBackend::slot_bytes(layout)));
  const int64_t wanted =
      options.n_kv_blocks_gpu > 0 ? options.n_kv_blocks_gpu : options.n_kv_blocks;
  const int64_t n = std::min(wanted, fitting);
  if (n < 1) {
    throw CudaError(str_cat("no VRAM left for the KV cache: ", free_bytes >> 20,
                            " MiB free after loading the weights; use a smaller model or "
                            "quantization, or raise --vram-cache-fraction"));
  }
  return n;
}

}  // namespace

CudaRuntime::CudaRuntime(const LoadedModel& model, const RuntimeOptions& options, int device)
    : device_(select_device(device)),
      layout_(options.kv_layout),
      weights_(model.weights()),
      kv_blocks_(std::make_unique<BlockPool>(layout_.block_bytes(),
                                             kv_blocks_in_vram(model.config(), layout_, options))),
      backend_(std::make_unique<CudaBackend>(weights_, model.config(), layout_, *kv_blocks_)) {
  // Always a host tier: the disk tier reaches VRAM only through it.
  const int64_t n_host = options.n_host_blocks > 0 ? options.n_host_blocks : options.n_kv_blocks;
  host_blocks_ = std::make_unique<BlockPool>(layout_.block_bytes(), std::max<int64_t>(1, n_host));
  host_pinning_ = std::make_unique<HostRegistration>(host_blocks_->memory());
  if (!host_pinning_->pinned()) {
    log_warning("the host KV tier could not be pinned (", host_pinning_->error(),
                "): copies to and from VRAM go through pageable memory, slower");
  }
  copier_ =
      std::make_unique<CudaBlockCopier>(backend_->kv_arena(), CudaBackend::slot_bytes(layout_),
                                        kv_blocks_->n_total(), layout_.block_bytes());
}

std::string CudaRuntime::description() const {
  return str_cat("CUDA on GPU ", device_.index, ", ", device_.name, " (sm_", device_.compute_major,
                 device_.compute_minor, ", ", device_.memory_bytes >> 30, " GiB); weights ",
                 weights_.device_bytes() >> 20, " MiB in VRAM; KV cache ", kv_blocks_->n_total(),
                 " blocks (", backend_->kv_arena_bytes() >> 20, " MiB of VRAM), host tier ",
                 host_blocks_->n_total(), " blocks (", host_blocks_->memory().size() >> 20,
                 host_pinning_->pinned() ? " MiB, pinned)" : " MiB, pageable)");
}

std::unique_ptr<ModelRuntime> make_cuda_runtime(const LoadedModel& model,
                                                const RuntimeOptions& options, int device) {
  return std::make_unique<CudaRuntime>(model, options, device);
}

}  // namespace strata
