#include "engine/cpu/cpu_runtime.h"

#include "common/str_cat.h"
#include "kernels/cpu/cpu_features.h"

namespace strata {

CpuRuntime::CpuRuntime(const LoadedModel& model, const CpuRuntimeOptions& options)
    : threads_(options.n_threads),
      layout_(options.kv_layout),
      kv_blocks_(layout_.block_bytes(), options.n_kv_blocks),
      backend_(model.weights(), layout_, kv_blocks_, threads_) {}

std::string CpuRuntime::description() const {
  return str_cat("CPU, ", threads_.n_threads(), " threads, ", cpu_simd_name(selected_cpu_simd()),
                 "; KV cache ", kv_blocks_.n_total(), " blocks (",
                 (kv_blocks_.n_total() * layout_.block_bytes()) >> 20, " MiB)");
}

}  // namespace strata
