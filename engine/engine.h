// Engine: one model's step loop on its own thread, serving many requests by
// continuous batching (DESIGN.md, "Engine"; "A request's life", steps 2-7).
//
// Each step is schedule -> run -> postprocess: the Scheduler picks decode
// tokens and prefill chunks within the token budget, the Backend runs them
// as one batched forward pass, and each sequence whose chunk reached its end
// samples a token, which is turned into an EngineEvent (text delta, token id,
// logprobs; finish reason and usage on the last one). A backend that chooses
// tokens where its logits are (the GPU) is handed each sequence's sampling
// state instead (Sampler::prepare_choice), and only the tokens come back.
//
// Threads: submit(), cancel() and stats() may be called from any thread. The
// engine thread owns the scheduler, the prefix cache, the block tables and
// the backend. Event callbacks run on the engine thread, in step order, and
// must neither block nor throw (post the event to your own executor); a
// callback that throws is logged and ignored.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "engine/backend.h"
#include "engine/generate_request.h"
#include "engine/request_limits.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"
#include "model/tokenizer/tokenizer.h"
#include "tiering/block_pool.h"
#include "tiering/device_copier.h"
#include "tiering/disk_worker.h"
#include "tiering/load_cost_model.h"
#include "tiering/lower_tiers.h"
#include "tiering/prefix_cache.h"

namespace strata {

struct EngineStats {
  int64_t n_running = 0;
  int64_t n_waiting = 0;  // submitted, not yet running (the inbox included)
  int64_t n_steps = 0;    // forward passes run
  int64_t n_preemptions = 0;
  int64_t n_prompt_tokens = 0;         // of accepted requests
  int64_t n_cached_prompt_tokens = 0;  // prompt tokens served from the prefix cache
  // Prompt positions run through the model (recomputes after preemption too).
  int64_t n_computed_prompt_tokens = 0;
  int64_t n_generated_tokens = 0;
  // Wall time spent in the backend's forward passes (host work and device
  // time alike), all steps: against the steps' count and the inter-token
  // latency, how much of a step the model itself takes.
  double forward_seconds = 0.0;
  // The same of steps that only decode (every sequence one new token): their
  // forward time against the inter-token latency of a steady batch, with no
  // prefill chunk mixed in.
  int64_t n_decode_steps = 0;
  double decode_forward_seconds = 0.0;
  int64_t n_blocks_used = 0;    // referenced by block tables
  int64_t n_blocks_cached = 0;  // published in the prefix cache (used or idle)
  int64_t n_blocks_total = 0;
  // The figures above are of the tier the backend computes in: VRAM (T0) on
  // a GPU, host memory (T1) on the CPU.
  int64_t n_block_hits = 0;     // blocks matched by admissions (brought-up ones too)
  int64_t n_blocks_loaded = 0;  // blocks loaded from the disk tier
  int64_t n_loads_declined = 0;  // prompts found on disk but computed: faster than loading
  std::optional<HostTierStats> host_tier;  // GPU engines: the pinned host tier below VRAM
};

// What one step ran, for tests and tracing.
struct StepReport {
  int64_t step = 0;  // 0-based
  struct Chunk {
    uint64_t request_id = 0;
    int64_t n_past = 0;
    int64_t n_tokens = 0;
    bool samples = false;  // a token was sampled from it
  };
  std::vector<Chunk> chunks;  // in batch order: decode tokens first
};

struct EngineOptions {
  // scheduler.model_fingerprint must be set, to
  // model_fingerprint(model file, backend KV layout) (engine/model_fingerprint.h):
  // the engine refuses the all-zero default, which would let block hashes of
  // different models collide.
  SchedulerOptions scheduler;
  // Prompt + max_tokens of one request, at most; 0: the model's context.
  int64_t context_length = 0;
  // After every step: Scheduler::check_integrity() (tests, debug builds).
  bool check_integrity = false;
  // Called on the engine thread after each step's postprocess; must not block.
  std::function<void(const StepReport&)> on_step = nullptr;
  // The disk tier (T2), if any: blocks are written through to it and prompts
  // found there are loaded instead of computed. Must outlive the engine.
  DiskWorker* disk_tier = nullptr;
  // Set when the backend computes in device memory (T0): the copy stream
  // between it and `host_blocks`, the pinned host tier (T1) below it, which
  // then stands between the VRAM and the disk (tiering/device_host_mover.h).
  // Both must outlive the engine; host_blocks entirely free.
  DeviceCopier* device_copier = nullptr;
  BlockPool* host_blocks = nullptr;
  // The disk tier's load-or-recompute choice (its rates are learned online).
  LoadCostOptions load_cost = {};
};

class Engine {
 public:
  // `kv_blocks` must be the pool the backend writes into, entirely free; the
  // engine owns its allocation from now on (through a PrefixCache). All three
  // must outlive the Engine. Starts the engine thread.
  Engine(Backend& backend, BlockPool& kv_blocks, const Tokenizer& tokenizer,
         const EngineOptions& options);
  // Cancels every request (each gets its final cancelled event), drops the
  // prefix cache (the pool is left entirely free) and joins.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Any thread. Queues the request and returns its id (> 0); `on_event`
  // receives its events on the engine thread. Throws std::invalid_argument,
  // with check_request's message, for a request outside limits().
  uint64_t submit(GenerateRequest request, EventCallback on_event);

  // Any thread. What one request may ask (engine/request_limits.h).
  const RequestLimits& limits() const { return limits_; }

  // Any thread. The request finishes with FinishReason::kCancelled at the
  // engine's next wake-up, its blocks freed; unknown or finished ids are ignored.
  void cancel(uint64_t id);

  // Any thread. A snapshot, updated by the engine thread after each step.
  EngineStats stats() const;

  // Any thread. Evicts every idle block of the prefix cache and of the host
  // tier below VRAM (blocks in use stay) and clears the disk tier; `done`
  // runs on the engine thread with the number of blocks evicted from memory.
  // POST /v1/cache/clear.
  void clear_cache(std::function<void(int64_t n_blocks)> done);
  // Any thread. Writes every cached block to the disk tier; `done` runs on
  // the engine thread once they are durable, with the number of blocks on
  // disk (at once with 0 without a disk tier). POST /v1/cache/persist.
  void persist_cache(std::function<void(int64_t n_on_disk)> done);

 private:
  // --- engine thread ---
  void loop();
  // Waits for work (`busy`: the last step ran, so there may be more) or a
  // tier move; moves the inbox into the scheduler and applies cancels.
  // False when shutting down.
  bool take_inbox(bool busy);
  // Runs one step; false when nothing could run (every waiting sequence is
  // loading or out of blocks until a move completes).
  bool step();
  void run(std::span<const ScheduledChunk> batch);
  void postprocess(std::span<const ScheduledChunk> batch);
  // Appends seq's next token (sampled from its logits row, or chosen by the
  // backend) and sends the event.
  void emit_token(Sequence& seq, SampledToken sample);
  void finish(std::unique_ptr<Sequence> seq, FinishReason reason, EngineEvent event,
              std::string error = {});
  void fail_batch(std::span<const ScheduledChunk> batch, const std::string& error);
  void publish_stats();
  static void emit(const Sequence& seq, EngineEvent& event);  // sets event.request_id

  Backend& backend_;
  const Tokenizer& tokenizer_;
  const EngineOptions options_;
  const RequestLimits limits_;
  // Free host blocks below which idle ones are demoted to disk (DESIGN.md).
  const int64_t demote_below_;

  // Engine thread only.
  PrefixCache cache_;
  std::unique_ptr<LowerTiers> tiers_;  // with a host tier below VRAM or a disk tier
  Scheduler scheduler_;
  std::vector<BatchSequence> batch_;  // this step's forward pass, views into sequences
  std::vector<float> logits_;         // [batch size][n_vocab]; unused when the backend chooses
  std::vector<TokenChoice> choices_;  // the sampling chunks' choices, when the backend chooses
  std::vector<SampledToken> chosen_;  // their tokens, in choices_ order
  int64_t n_generated_tokens_ = 0;
  double forward_seconds_ = 0.0;
  int64_t n_decode_steps_ = 0;
  double decode_forward_seconds_ = 0.0;

  // Shared with submitting threads, under mutex_.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Sequence>> inbox_;
  std::vector<uint64_t> cancels_;
  std::vector<std::function<void()>> tasks_;  // run on the engine thread at its next wake-up
  bool stopping_ = false;
  bool tier_moved_ = false;  // a lower tier completed a move
  uint64_t next_id_ = 1;
  int64_t n_prompt_tokens_ = 0;  // accepted by submit()
  EngineStats stats_;

  std::thread thread_;  // last: starts after everything above is built
};

}  // namespace strata
