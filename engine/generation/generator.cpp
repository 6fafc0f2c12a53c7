#include "engine/generation/generator.h"

#include <chrono>
#include <stdexcept>

#include "common/check.h"
#include "common/str_cat.h"
#include "engine/sampler/stop_matcher.h"
#include "engine/tokenizer/stream_decoder.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::string_view finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
  }
  return "?";
}

Generator::Generator(Backend& backend, BlockPool& kv_blocks, const Tokenizer& tokenizer)
    : backend_(backend), kv_blocks_(kv_blocks), tokenizer_(tokenizer) {}

void Generator::check_fits(const GenerationRequest& r) const {
  const int64_t n_prompt = static_cast<int64_t>(r.prompt.size());
  const int64_t context = backend_.config().context_length;
  if (n_prompt == 0) throw std::invalid_argument("the prompt is empty");
  for (TokenId id : r.prompt) {
    if (!tokenizer_.is_valid(id)) {
      throw std::invalid_argument(str_cat("prompt token ", id, " is outside the vocabulary"));
    }
  }
  if (r.max_tokens < 1) throw std::invalid_argument("max_tokens must be at least 1");
  if (r.prefill_chunk_tokens < 1) {
    throw std::invalid_argument(
        str_cat("a prefill chunk of ", r.prefill_chunk_tokens, " tokens: it must be at least 1"));
  }
  if (n_prompt + r.max_tokens > context) {
    throw std::invalid_argument(str_cat("the prompt (", n_prompt, " tokens) plus max_tokens (",
                                        r.max_tokens, ") exceeds the context length (", context,
                                        ")"));
  }
  const int64_t n_blocks = backend_.kv_layout().blocks_for(n_prompt + r.max_tokens);
  if (n_blocks > kv_blocks_.n_free()) {
    throw std::invalid_argument(str_cat("the request needs ", n_blocks, " KV blocks but only ",
                                        kv_blocks_.n_free(), " are free"));
  }
  if (std::optional<std::string> error = r.sampling.validate()) {
    throw std::invalid_argument(*error);
  }
}

void Generator::reserve_blocks(int64_t n_tokens) {
  const int64_t needed = backend_.kv_layout().blocks_for(n_tokens);
  while (static_cast<int64_t>(block_table_.size()) < needed) {
    std::optional<BlockId> block = kv_blocks_.allocate();
    STRATA_CHECK(block.has_value(), "KV blocks were checked free before generating");
    block_table_.push_back(*block);
  }
}

void Generator::release_blocks() {
  for (BlockId block : block_table_) kv_blocks_.free(block);
  block_table_.clear();
}

void Generator::forward_only(const BatchSequence& seq) {
  if (backend_.chooses_tokens()) {
    backend_.forward_and_choose({&seq, 1}, {}, chosen_);  // no logits come back
  } else {
    backend_.forward({&seq, 1}, logits_);
  }
}

SampledToken Generator::forward_and_sample(const BatchSequence& seq, Sampler& sampler,
                                           const GenerationRequest& request,
                                           std::span<const TokenId> generated) {
  const auto n_vocab = static_cast<size_t>(backend_.config().n_vocab);
  if (backend_.chooses_tokens()) {
    sampler.prepare_choice(request.prompt, generated, request.logprobs, n_vocab, choice_);
    backend_.forward_and_choose({&seq, 1}, {&choice_, 1}, chosen_);
    return std::move(chosen_.at(0));
  }
  backend_.forward({&seq, 1}, logits_);
  return sampler.sample(std::span<const float>(logits_).first(n_vocab), request.prompt, generated,
                        request.logprobs);
}

GenerationResult Generator::generate(const GenerationRequest& request,
                                     const std::function<void(std::string_view)>& on_text,
                                     const std::atomic<bool>& cancel) {
  check_fits(request);
  GenerationResult result;
  Sampler sampler(request.sampling);
  StreamDecoder decoder(tokenizer_);
  StopMatcher stops(request.stop);
  auto emit = [&](const std::string& text) {
    if (text.empty()) return;
    result.text += text;
    on_text(text);
  };

  // Prefill in chunks; only the last chunk's last position needs a token.
  const Clock::time_point start = Clock::now();
  int64_t n_past = 0;
  const int64_t n_prompt = static_cast<int64_t>(request.prompt.size());
  std::span<const TokenId> prompt(request.prompt);
  SampledToken next;  // the token the last forward pass picked
  while (n_past < n_prompt && !cancel.load(std::memory_order_relaxed)) {
    const int64_t n = std::min(request.prefill_chunk_tokens, n_prompt - n_past);
    reserve_blocks(n_past + n);
    const BatchSequence seq{.tokens = prompt.subspan(n_past, n), .n_past = n_past,
                            .block_table = block_table_, .all_logits = false};
    n_past += n;
    if (n_past < n_prompt) {
      forward_only(seq);
    } else {
      next = forward_and_sample(seq, sampler, request, result.tokens);
    }
  }

  Clock::time_point decode_start = Clock::now();
  result.finish = FinishReason::kLength;
  while (static_cast<int64_t>(result.tokens.size()) < request.max_tokens) {
    if (cancel.load(std::memory_order_relaxed)) {
      result.finish = FinishReason::kCancelled;
      break;
    }
    SampledToken sample = std::move(next);
    if (result.tokens.empty()) {
      result.prefill_seconds = seconds_since(start);
      decode_start = Clock::now();
    }
    result.tokens.push_back(sample.id);
    result.samples.push_back(std::move(sample));
    const TokenId id = result.tokens.back();
    if (!request.ignore_eos && tokenizer_.is_end_of_generation(id)) {
      result.finish = FinishReason::kStop;
      break;
    }
    StopMatchResult matched = stops.feed(decoder.feed(id));
    emit(matched.text);
    if (matched.stopped) {
      result.finish = FinishReason::kStop;
      break;
    }
    if (static_cast<int64_t>(result.tokens.size()) == request.max_tokens) break;
    // Decode: one new token on top of everything so far.
    reserve_blocks(n_past + 1);
    const BatchSequence seq{.tokens = std::span<const TokenId>(&result.tokens.back(), 1),
                            .n_past = n_past, .block_table = block_table_, .all_logits = false};
    next = forward_and_sample(seq, sampler, request, result.tokens);
    ++n_past;
    ++result.n_decode_steps;
  }
  if (!stops.stopped()) emit(stops.feed(decoder.flush()).text + stops.flush());
  result.decode_seconds = seconds_since(decode_start);
  release_blocks();
  return result;
}

}  // namespace strata
