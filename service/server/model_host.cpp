#include "service/server/model_host.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "common/check.h"
#include "common/log.h"
#include "engine/model_fingerprint.h"

namespace strata {
namespace {

// Host KV blocks (T1) within the memory cap.
int64_t host_blocks_cap(const ModelHostOptions& o, const KvLayout& layout) {
  const int64_t cap_bytes =
      o.host_cache_bytes > 0 ? o.host_cache_bytes : ModelHostOptions::kDefaultHostCacheCap;
  return std::max<int64_t>(1, cap_bytes / layout.block_bytes());
}

// KV blocks the CPU computes in: max_running full contexts, within the cap.
int64_t kv_blocks_for(const ModelHostOptions& o, const KvLayout& layout, int64_t context) {
  const int64_t wanted = o.max_running * layout.blocks_for(context);
  const int64_t cap = host_blocks_cap(o, layout);
  return o.host_cache_bytes > 0 ? cap : std::min(wanted, cap);
}

}  // namespace

ModelHost::ModelHost(ModelHostOptions options) : options_(std::move(options)) {}

void ModelHost::start(std::function<void(const std::string&)> on_done) {
  STRATA_CHECK(!loader_.joinable(), "ModelHost::start called twice");
  loader_ = std::thread([this, on_done = std::move(on_done)] { load(on_done); });
}

ModelHost::~ModelHost() {
  if (loader_.joinable()) loader_.join();
  engine_.reset();  // before the runtime, model and disk tier it uses
  disk_tier_.reset();
}

void ModelHost::load(const std::function<void(const std::string&)>& on_done) {
  try {
    model_ = LoadedModel::open(options_.model_path);
    const ModelConfig& config = model_->config();
    int64_t context = config.context_length;
    if (options_.context_length > 0) context = std::min(context, options_.context_length);
    const KvLayout layout = KvLayout::for_model(config, options_.block_tokens, options_.kv_type);
    runtime_ = make_runtime(
        *model_,
        RuntimeOptions{.n_kv_blocks = kv_blocks_for(options_, layout, context),
                       .n_kv_blocks_gpu = options_.max_running * layout.blocks_for(context),
                       .n_host_blocks = host_blocks_cap(options_, layout),
                       .n_threads = options_.threads,
                       .kv_dtype = options_.kv_type,
                       .block_tokens = options_.block_tokens,
                       .backend = options_.backend,
                       .vram_cache_fraction = options_.vram_cache_fraction});
    kv_blocks_total_ = runtime_->kv_blocks().n_total();
    context_length_ = std::min(context, kv_blocks_total_ * layout.block_tokens);
    SchedulerOptions scheduler{.max_batch_tokens = options_.max_batch_tokens,
                               .max_running = options_.max_running,
                               .model_fingerprint = model_fingerprint(model_->file(), layout)};
    open_disk_tier(layout, scheduler.model_fingerprint);
    engine_ = std::make_unique<Engine>(
        runtime_->backend(), runtime_->kv_blocks(), model_->tokenizer(),
        EngineOptions{.scheduler = scheduler, .disk_tier = disk_tier_.get(),
                      .device_copier = runtime_->device_copier(),
                      .host_blocks = runtime_->host_blocks()});
    log_info("model ready: context ", context_length_, " tokens, KV cache ", kv_blocks_total_,
             " blocks of ", layout.block_tokens, " tokens (",
             (kv_blocks_total_ * layout.block_bytes()) >> 20, " MiB)");
    state_.store(State::kReady, std::memory_order_release);
    on_done("");
  } catch (const std::exception& e) {
    state_.store(State::kFailed, std::memory_order_release);
    on_done(e.what());
  }
}

void ModelHost::open_disk_tier(const KvLayout& layout, const ModelFingerprint& fingerprint) {
  if (options_.cache_dir.empty()) return;
  // One folder per fingerprint: slab headers name it too, and a block of one
  // model (quantization, KV type, block size) is never served to another.
  const std::filesystem::path dir =
      std::filesystem::path(options_.cache_dir) / ("kv-" + fingerprint.to_hex().substr(0, 16));
  try {
    disk_tier_ =
        std::make_unique<TierWorker>(DiskTierOptions{.dir = dir,
                                                     .block_bytes = layout.block_bytes(),
                                                     .capacity_bytes = options_.disk_cache_bytes,
                                                     .model = fingerprint,
                                                     .persist = options_.persist});
    const DiskTierStats stats = disk_tier_->stats();
    log_info("disk KV cache ", dir.string(), ": ", stats.n_blocks, " blocks stored, room for ",
             stats.capacity_blocks, options_.persist ? "" : " (not persisting new blocks)");
  } catch (const std::exception& e) {
    log_warning("no disk KV cache: ", e.what());
  }
}

}  // namespace strata
