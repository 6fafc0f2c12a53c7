#include "engine/model_runtime.h"

#include <stdexcept>

#include "common/log.h"
#include "common/str_cat.h"
#include "engine/cpu/cpu_runtime.h"
#include "gpu/gpu_devices.h"

namespace strata {

BackendChoice parse_backend(std::string_view name) {
  if (name == "auto") return BackendChoice::kAuto;
  if (name == "cpu") return BackendChoice::kCpu;
  if (name == "cuda") return BackendChoice::kCuda;
  throw std::invalid_argument(str_cat("backend '", name, "' is not one of: auto, cpu, cuda"));
}

std::unique_ptr<ModelRuntime> make_runtime(const LoadedModel& model,
                                           const RuntimeOptions& options) {
  std::unique_ptr<ModelRuntime> runtime;
  if (options.backend != BackendChoice::kCpu) {
    const GpuProbe probe = probe_gpus();
    if (!probe.devices.empty()) {
      runtime = make_cuda_runtime(model, options, probe.devices.front().index);
    } else if (options.backend == BackendChoice::kCuda) {
      throw std::runtime_error(
          str_cat("--backend cuda: no usable GPU (", probe.unavailable_reason, ")"));
    } else {
      log_info("no GPU: ", probe.unavailable_reason);
    }
  }
  if (runtime == nullptr) {
    runtime = std::make_unique<CpuRuntime>(
        model, CpuRuntimeOptions{.kv_layout = options.kv_layout,
                                 .n_kv_blocks = options.n_kv_blocks,
                                 .n_threads = options.n_threads});
  }
  log_info("backend: ", runtime->description());
  return runtime;
}

}  // namespace strata
