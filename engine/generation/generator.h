// Generator: one sequence from prompt to last token on a Backend — chunked
// prefill, then decode with the sampler, stop strings and end-of-generation
// tokens. It is what `strata run` and `strata bench` drive; the server's
// Engine (continuous batching) schedules many sequences instead.
//
// Threads: generate() runs on the caller's thread; `cancel` may be set from
// any thread and is checked between forward passes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend.h"
#include "engine/sampler/sampler.h"
#include "engine/tokenizer/tokenizer.h"
#include "tiering/block_pool.h"

namespace strata {

enum class FinishReason { kStop, kLength, kCancelled };
std::string_view finish_reason_name(FinishReason reason);  // "stop", "length", "cancelled"

struct GenerationRequest {
  std::vector<TokenId> prompt;
  SamplingParams sampling;
  int64_t max_tokens = 256;
  std::vector<std::string> stop;  // stop strings; the text before the first match is kept
  bool ignore_eos = false;        // benchmarks: always run max_tokens
  bool logprobs = true;           // fill GenerationResult::samples' logprob and top
  // Prompt tokens per forward pass while prefilling, >= 1. Larger chunks
  // read the weights fewer times (on a GPU, a long prompt's matmuls become
  // fewer, larger GEMMs) for more activation memory.
  int64_t prefill_chunk_tokens = 512;
};

struct GenerationResult {
  std::vector<TokenId> tokens;  // generated, the end-of-generation token included
  std::vector<SampledToken> samples;  // per generated token: id, logprob, top alternatives
  std::string text;             // decoded, cut at a stop string
  FinishReason finish = FinishReason::kLength;
  double prefill_seconds = 0;   // first forward pass to first token
  double decode_seconds = 0;    // the rest
  int64_t n_decode_steps = 0;   // tokens produced after the first
};

class Generator {
 public:
  // kv_blocks must be the pool the backend writes into. All three must
  // outlive the Generator.
  Generator(Backend& backend, BlockPool& kv_blocks, const Tokenizer& tokenizer);

  // Throws std::invalid_argument when the request does not fit: empty prompt,
  // prompt + max_tokens beyond the context length, or more KV blocks than the
  // pool holds. on_text receives each piece of text as it becomes final.
  GenerationResult generate(const GenerationRequest& request,
                            const std::function<void(std::string_view text)>& on_text,
                            const std::atomic<bool>& cancel);

 private:
  void check_fits(const GenerationRequest& request) const;
  // Ensures block_table_ covers n_tokens tokens.
  void reserve_blocks(int64_t n_tokens);
  void release_blocks();
  // Runs seq through the model for its K/V alone.
  void forward_only(const BatchSequence& seq);
  // Runs seq through the model and picks the token after its last: on the
  // backend where it chooses tokens, else by the sampler from the logits.
  SampledToken forward_and_sample(const BatchSequence& seq, Sampler& sampler,
                                  const GenerationRequest& request,
                                  std::span<const TokenId> generated);

  Backend& backend_;
  BlockPool& kv_blocks_;
  const Tokenizer& tokenizer_;
  std::vector<BlockId> block_table_;
  std::vector<float> logits_;  // last forward pass: rows of n_vocab
  TokenChoice choice_;         // where the backend chooses tokens
  std::vector<SampledToken> chosen_;
};

}  // namespace strata
