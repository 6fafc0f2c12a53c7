#include "service/server/model_host.h"

#include <exception>
#include <utility>

#include "common/check.h"
#include "common/log.h"

namespace strata {

ModelHost::ModelHost(ModelHostOptions options) : options_(std::move(options)) {}

void ModelHost::start(std::function<void(const std::string&)> on_done) {
  STRATA_CHECK(!loader_.joinable(), "ModelHost::start called twice");
  loader_ = std::thread([this, on_done = std::move(on_done)] { load(on_done); });
}

ModelHost::~ModelHost() {
  if (loader_.joinable()) loader_.join();
  model_engine_.reset();  // before the model it runs
}

void ModelHost::load(const std::function<void(const std::string&)>& on_done) {
  try {
    model_ = LoadedModel::open(options_.model_path, options_.chat_template);
    file_guard_.emplace(model_->file().bytes(), model_->path());
    model_engine_ = std::make_unique<ModelEngine>(*model_, options_.engine);
    const KvLayout& layout = model_engine_->kv_layout();
    log_info("model ready: context ", context_length(), " tokens, KV cache ", kv_blocks_total(),
             " blocks of ", layout.block_tokens, " tokens (",
             (kv_blocks_total() * layout.block_bytes()) >> 20, " MiB)");
    state_.store(State::kReady, std::memory_order_release);
    on_done("");
  } catch (const std::exception& e) {
    state_.store(State::kFailed, std::memory_order_release);
    on_done(e.what());
  }
}

}  // namespace strata
