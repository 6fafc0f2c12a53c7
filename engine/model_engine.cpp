#include "engine/model_engine.h"

#include <algorithm>
#include <exception>
#include <filesystem>

#include "common/log.h"
#include "engine/kv_sizing.h"
#include "engine/model_fingerprint.h"

namespace strata {
namespace {

int64_t context_wanted(const LoadedModel& model, const ModelEngineOptions& options) {
  const int64_t context = model.config().context_length;
  return options.context_length > 0 ? std::min(context, options.context_length) : context;
}

RuntimeOptions runtime_options(const LoadedModel& model, const KvLayout& layout,
                               const ModelEngineOptions& o) {
  const KvBudget budget = kv_budget(layout, context_wanted(model, o), o.max_running,
                                    o.host_cache_bytes, o.n_kv_blocks);
  return RuntimeOptions{.kv_layout = layout,
                        .n_kv_blocks = budget.n_compute_blocks,
                        .n_kv_blocks_gpu = budget.n_gpu_blocks,
                        .n_host_blocks = budget.n_host_blocks,
                        .n_threads = o.threads,
                        .backend = o.backend,
                        .vram_cache_fraction = o.vram_cache_fraction};
}

}  // namespace

ModelEngine::ModelEngine(const LoadedModel& model, const ModelEngineOptions& options)
    : layout_(kv_layout_for(model.config(), options.block_tokens, options.kv_type)),
      fingerprint_(model_fingerprint(model.file(), layout_)),
      runtime_(make_runtime(model, runtime_options(model, layout_, options))) {
  open_disk_tier(options);
  const int64_t n_blocks = runtime_->kv_blocks().n_total();
  engine_ = std::make_unique<Engine>(
      runtime_->backend(), runtime_->kv_blocks(), model.tokenizer(),
      EngineOptions{.scheduler = {.max_batch_tokens = options.max_batch_tokens,
                                  .max_running = options.max_running,
                                  .model_fingerprint = fingerprint_},
                    .context_length = std::min(context_wanted(model, options),
                                               n_blocks * layout_.block_tokens),
                    .check_integrity = options.check_integrity,
                    .on_step = options.on_step,
                    .disk_tier = disk_tier_.get(),
                    .device_copier = runtime_->device_copier(),
                    .host_blocks = runtime_->host_blocks()});
}

ModelEngine::~ModelEngine() {
  engine_.reset();  // before the runtime and the disk tier it uses
  disk_tier_.reset();
}

void ModelEngine::open_disk_tier(const ModelEngineOptions& options) {
  if (options.cache_dir.empty()) return;
  // One folder per fingerprint: slab headers name it too, and a block of one
  // model (quantization, KV type, block size) is never served to another.
  const std::filesystem::path dir =
      std::filesystem::path(options.cache_dir) / ("kv-" + fingerprint_.to_hex().substr(0, 16));
  try {
    disk_tier_ = std::make_unique<DiskWorker>(DiskTierOptions{.dir = dir,
                                                              .block_bytes = layout_.block_bytes(),
                                                              .capacity_bytes =
                                                                  options.disk_cache_bytes,
                                                              .model = fingerprint_,
                                                              .persist = options.persist,
                                                              .retry_max = options.disk_retry_max});
    const DiskTierStats stats = disk_tier_->stats();
    log_info("disk KV cache ", dir.string(), ": ", stats.n_blocks, " blocks stored, room for ",
             stats.capacity_blocks, options.persist ? "" : " (not persisting new blocks)");
  } catch (const std::exception& e) {
    log_warning("no disk KV cache: ", e.what());
  }
}

}  // namespace strata
