#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <utility>

#include "common/check.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "tiering/device_host_mover.h"
#include "tiering/host_disk_mover.h"

namespace strata {
namespace {

std::unique_ptr<LowerTiers> make_lower_tiers(PrefixCache& cache, BlockPool& kv_blocks,
                                             const EngineOptions& options) {
  if (options.device_copier != nullptr) {
    STRATA_CHECK(options.host_blocks != nullptr, "a device copier without a host tier");
    return std::make_unique<DeviceHostMover>(cache, *options.host_blocks, *options.device_copier,
                                        options.disk_tier, options.load_cost);
  }
  if (options.disk_tier != nullptr) {
    return std::make_unique<HostDiskMover>(cache, kv_blocks, *options.disk_tier, options.load_cost);
  }
  return nullptr;
}

}  // namespace

Engine::Engine(Backend& backend, BlockPool& kv_blocks, const Tokenizer& tokenizer,
               const EngineOptions& options)
    : backend_(backend),
      tokenizer_(tokenizer),
      options_(options),
      limits_{.n_vocab = backend.config().n_vocab,
              .context_length = options.context_length > 0 ? options.context_length
                                                           : backend.config().context_length,
              .block_tokens = backend.kv_layout().block_tokens,
              .n_kv_blocks = kv_blocks.n_total()},
      demote_below_(std::max<int64_t>(1, kv_blocks.n_total() / 10)),
      cache_(kv_blocks, limits_.block_tokens),
      tiers_(make_lower_tiers(cache_, kv_blocks, options)),
      scheduler_(cache_, limits_.block_tokens, options.scheduler, tiers_.get()) {
  STRATA_CHECK(kv_blocks.n_free() == kv_blocks.n_total(), "the KV pool must start free");
  STRATA_CHECK(options.scheduler.model_fingerprint != ModelFingerprint{},
               "EngineOptions.scheduler.model_fingerprint is unset: build it with "
               "model_fingerprint(model file, KV layout)");
  stats_.n_blocks_total = cache_.n_total();
  auto on_move = [this] {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tier_moved_ = true;
    }
    wake_.notify_one();
  };
  if (options.disk_tier) options.disk_tier->set_listener(on_move);
  if (options.device_copier) options.device_copier->set_listener(on_move);
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  if (options_.disk_tier) options_.disk_tier->set_listener(nullptr);
  if (options_.device_copier) options_.device_copier->set_listener(nullptr);
}

uint64_t Engine::submit(GenerateRequest request, EventCallback on_event) {
  if (std::optional<RequestError> error = check_request(request, limits_, tokenizer_)) {
    throw std::invalid_argument(error->message);
  }
  const int64_t n_prompt = static_cast<int64_t>(request.prompt.size());
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw std::runtime_error("the engine is shutting down");
    id = next_id_++;
    n_prompt_tokens_ += n_prompt;
    inbox_.push_back(std::make_unique<Sequence>(id, /*arrival=*/id, std::move(request),
                                                std::move(on_event), tokenizer_));
  }
  wake_.notify_one();
  return id;
}

void Engine::clear_cache(std::function<void(int64_t)> done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back([this, done = std::move(done)] {
      int64_t n = cache_.evict_all_idle();
      if (tiers_) n += tiers_->clear();
      publish_stats();
      done(n);
    });
  }
  wake_.notify_one();
}

void Engine::persist_cache(std::function<void(int64_t)> done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back([this, done = std::move(done)]() mutable {
      if (tiers_) {
        tiers_->flush(std::move(done));
      } else {
        done(0);
      }
    });
  }
  wake_.notify_one();
}

void Engine::cancel(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancels_.push_back(id);
  }
  wake_.notify_one();
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  EngineStats stats = stats_;
  stats.n_waiting += static_cast<int64_t>(inbox_.size());
  stats.n_prompt_tokens = n_prompt_tokens_;
  return stats;
}

// --- engine thread ---------------------------------------------------------

void Engine::loop() {
  bool ran = false;
  while (take_inbox(ran)) {
    const bool moved = tiers_ && tiers_->poll() > 0;
    ran = scheduler_.has_work() && step();
    if (tiers_) tiers_->demote_cold(demote_below_);
    if (moved && !ran) publish_stats();  // pins dropped: blocks in use changed
  }
  for (std::unique_ptr<Sequence>& seq : scheduler_.remove_all()) {
    finish(std::move(seq), FinishReason::kCancelled, EngineEvent{});
  }
  // Moves in flight hold blocks: let them finish (write-through is kept).
  if (tiers_) tiers_->drain();
  // Hand the pool back entirely free: allocating evicts every idle cached
  // block (nothing is referenced any more), releasing returns it to the pool.
  std::vector<BlockId> drained;
  while (std::optional<BlockId> block = cache_.allocate()) drained.push_back(*block);
  for (BlockId block : drained) cache_.release(block);
  publish_stats();
}

bool Engine::take_inbox(bool busy) {
  std::deque<std::unique_ptr<Sequence>> arrived;
  std::vector<uint64_t> cancels;
  std::vector<std::function<void()>> tasks;
  bool stopping = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] {
      return busy || stopping_ || tier_moved_ || !inbox_.empty() || !cancels_.empty() ||
             !tasks_.empty();
    });
    tier_moved_ = false;
    tasks.swap(tasks_);
    arrived.swap(inbox_);
    cancels.swap(cancels_);
    stopping = stopping_;
  }
  if (stopping) {
    // Requests still in the inbox are cancelled with the rest in loop().
    for (std::unique_ptr<Sequence>& seq : arrived) scheduler_.add(std::move(seq));
    for (std::function<void()>& task : tasks) task();  // each caller hears back
    return false;
  }
  for (std::unique_ptr<Sequence>& seq : arrived) scheduler_.add(std::move(seq));
  for (uint64_t id : cancels) {
    if (std::unique_ptr<Sequence> seq = scheduler_.remove(id)) {
      finish(std::move(seq), FinishReason::kCancelled, EngineEvent{});
    }
  }
  for (std::function<void()>& task : tasks) task();
  if (!cancels.empty() || !arrived.empty()) publish_stats();
  return true;
}

bool Engine::step() {
  std::vector<ScheduledChunk> batch = scheduler_.schedule();
  if (batch.empty()) {
    // Only with moves in flight, which will wake the engine: submit() refuses
    // a request that could never fit the pool.
    STRATA_CHECK(scheduler_.n_loading() > 0 || tiers_, "the scheduler has work but planned none");
    return false;
  }
  try {
    run(batch);
  } catch (const std::exception& e) {
    fail_batch(batch, e.what());
    return true;
  }
  crash_point("engine.step");
  postprocess(batch);
  if (options_.check_integrity) scheduler_.check_integrity();
  publish_stats();
  return true;
}

void Engine::run(std::span<const ScheduledChunk> batch) {
  batch_.clear();
  for (const ScheduledChunk& chunk : batch) {
    batch_.push_back(BatchSequence{
        .tokens = chunk.seq->tokens().subspan(chunk.n_past, chunk.n_tokens),
        .n_past = chunk.n_past,
        .block_table = chunk.seq->block_table,
        .all_logits = false});
  }
  const auto start = std::chrono::steady_clock::now();
  if (backend_.chooses_tokens()) {
    const auto n_vocab = static_cast<size_t>(backend_.config().n_vocab);
    choices_.resize(batch.size());
    size_t n_choices = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!batch[i].samples()) continue;
      Sequence& seq = *batch[i].seq;
      TokenChoice& choice = choices_[n_choices++];
      choice.batch_index = i;
      seq.sampler.prepare_choice(seq.prompt(), seq.generated(), seq.request.logprobs, n_vocab,
                                 choice);
    }
    backend_.forward_and_choose(batch_, std::span(choices_).first(n_choices), chosen_);
    STRATA_CHECK(chosen_.size() == n_choices, "the backend chose ", chosen_.size(), " tokens for ",
                 n_choices, " sequences");
  } else {
    backend_.forward(batch_, logits_);
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  forward_seconds_ += took.count();
  if (std::ranges::all_of(batch, [](const ScheduledChunk& c) { return c.n_tokens == 1; })) {
    ++n_decode_steps_;
    decode_forward_seconds_ += took.count();
  }
  if (tiers_) {
    int64_t n_tokens = 0;
    for (const ScheduledChunk& chunk : batch) n_tokens += chunk.n_tokens;
    tiers_->observe_step(n_tokens, took.count());
  }
}

void Engine::postprocess(std::span<const ScheduledChunk> batch) {
  const int64_t n_vocab = backend_.config().n_vocab;
  StepReport report{.step = scheduler_.n_steps() - 1, .chunks = {}};
  size_t n_chosen = 0;
  for (size_t row = 0; row < batch.size(); ++row) {
    const ScheduledChunk& chunk = batch[row];
    const bool samples = chunk.samples();
    report.chunks.push_back(StepReport::Chunk{.request_id = chunk.seq->id, .n_past = chunk.n_past,
                                              .n_tokens = chunk.n_tokens, .samples = samples});
    scheduler_.mark_computed(chunk);
    if (!samples) continue;
    Sequence& seq = *chunk.seq;
    if (backend_.chooses_tokens()) {
      emit_token(seq, std::move(chosen_[n_chosen++]));
    } else {
      emit_token(seq, seq.sampler.sample(
                          std::span<const float>(logits_).subspan(row * n_vocab, n_vocab),
                          seq.prompt(), seq.generated(), seq.request.logprobs));
    }
  }
  if (options_.on_step) options_.on_step(report);
}

void Engine::emit_token(Sequence& seq, SampledToken sample) {
  const TokenId id = sample.id;
  seq.append(id);
  ++n_generated_tokens_;
  EngineEvent event;
  event.token_ids.push_back(id);
  if (seq.request.logprobs) event.logprobs.push_back(std::move(sample));

  std::optional<FinishReason> reason;
  if (!seq.request.ignore_eos && tokenizer_.is_end_of_generation(id)) {
    reason = FinishReason::kStop;  // the end token's text is not sent
  } else {
    StopMatchResult matched = seq.stops.feed(seq.decoder.feed(id));
    event.text = std::move(matched.text);
    if (matched.stopped) {
      reason = FinishReason::kStop;
      event.matched_stop = matched.matched_stop;
    }
  }
  if (!reason && seq.n_generated() >= seq.request.max_tokens) reason = FinishReason::kLength;
  if (!reason) {
    emit(seq, event);
    return;
  }
  if (!seq.stops.stopped()) {  // release text held for a stop string or a partial character
    StopMatchResult tail = seq.stops.feed(seq.decoder.flush());
    event.text += tail.text;
    if (tail.stopped) event.matched_stop = tail.matched_stop;
    if (!tail.stopped) event.text += seq.stops.flush();
  }
  finish(scheduler_.remove(seq.id), *reason, std::move(event));
}

void Engine::finish(std::unique_ptr<Sequence> seq, FinishReason reason, EngineEvent event,
                    std::string error) {
  STRATA_CHECK(seq != nullptr);
  event.finish = reason;
  event.error = std::move(error);
  event.usage = Usage{.prompt_tokens = seq->n_prompt(),
                      .cached_prompt_tokens = seq->n_cached_prompt,
                      .completion_tokens = seq->n_generated()};
  emit(*seq, event);
}

void Engine::fail_batch(std::span<const ScheduledChunk> batch, const std::string& error) {
  log_error("forward pass failed: ", error);
  std::vector<uint64_t> ids;
  for (const ScheduledChunk& chunk : batch) ids.push_back(chunk.seq->id);
  for (uint64_t id : ids) {
    finish(scheduler_.remove(id), FinishReason::kError, EngineEvent{}, error);
  }
  publish_stats();
}

void Engine::emit(const Sequence& seq, EngineEvent& event) {
  if (!seq.on_event) return;
  event.request_id = seq.id;
  try {
    seq.on_event(event);
  } catch (const std::exception& e) {
    log_error("event callback of request ", seq.id, " threw: ", e.what());
  }
}

void Engine::publish_stats() {
  EngineStats stats;
  stats.n_running = scheduler_.n_running();
  stats.n_waiting = scheduler_.n_waiting();
  stats.n_steps = scheduler_.n_steps();
  stats.n_preemptions = scheduler_.n_preemptions();
  stats.n_cached_prompt_tokens = scheduler_.n_cached_prompt_tokens();
  stats.n_computed_prompt_tokens = scheduler_.n_computed_prompt_tokens();
  stats.n_generated_tokens = n_generated_tokens_;
  stats.forward_seconds = forward_seconds_;
  stats.n_decode_steps = n_decode_steps_;
  stats.decode_forward_seconds = decode_forward_seconds_;
  stats.n_blocks_used = cache_.n_referenced();
  stats.n_blocks_cached = cache_.n_cached();
  stats.n_blocks_total = cache_.n_total();
  stats.n_block_hits = cache_.counters().hits;
  stats.n_blocks_loaded = tiers_ ? tiers_->n_blocks_loaded() : 0;
  stats.n_loads_declined = tiers_ ? tiers_->n_loads_declined() : 0;
  if (tiers_) stats.host_tier = tiers_->host_tier_stats();
  std::lock_guard<std::mutex> lock(mutex_);
  stats_ = stats;
}

}  // namespace strata
