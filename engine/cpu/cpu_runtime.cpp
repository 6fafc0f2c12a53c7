#include "engine/cpu/cpu_runtime.h"

namespace strata {

CpuRuntime::CpuRuntime(const LoadedModel& model, const CpuRuntimeOptions& options)
    : threads_(options.n_threads),
      layout_(KvLayout::for_model(model.config(), options.block_tokens, options.kv_dtype)),
      kv_blocks_(layout_.block_bytes(), options.n_kv_blocks),
      backend_(model.weights(), layout_, kv_blocks_, threads_) {}

}  // namespace strata
