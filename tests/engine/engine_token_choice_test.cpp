// The Engine with a backend that chooses tokens itself, as the CUDA backend
// does (Backend::chooses_tokens): it must hand the backend one TokenChoice
// per sampling chunk, in batch order, with the sampler's penalties and
// draws, and send out what comes back. The backend here wraps the CPU's and
// chooses greedily on the host from what it is handed (the penalty entries,
// not the token lists), so the engine's outputs must equal the plain CPU
// engine's, logprobs included. The GPU's own choice is tested against the
// Sampler in tests/kernels/cuda/cuda_token_choice_test.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "engine/kv_sizing.h"
#include "kernels/sampling/candidate_selection.h"
#include "tests/engine/engine_test_support.h"

namespace strata {
namespace {

using testing::Collector;
using testing::request_for;
using testing::test_fingerprint;
using testing::test_model;

class HostChoosingBackend final : public Backend {
 public:
  explicit HostChoosingBackend(Backend& inner) : inner_(inner) {}

  const ModelConfig& config() const override { return inner_.config(); }
  const KvLayout& kv_layout() const override { return inner_.kv_layout(); }
  void forward(std::span<const BatchSequence> batch, std::vector<float>& logits) override {
    inner_.forward(batch, logits);
  }
  bool chooses_tokens() const override { return true; }

  void forward_and_choose(std::span<const BatchSequence> batch,
                          std::span<const TokenChoice> choices,
                          std::vector<SampledToken>& chosen) override {
    inner_.forward(batch, logits_);
    chosen.clear();
    const auto n_vocab = static_cast<size_t>(config().n_vocab);
    size_t previous = 0;
    for (const TokenChoice& choice : choices) {
      EXPECT_TRUE(chosen.empty() || choice.batch_index > previous) << "choices out of order";
      previous = choice.batch_index;
      EXPECT_LT(choice.params.temperature, SamplingParams::kGreedyTemperature);
      const std::span<const float> raw =
          std::span<const float>(logits_).subspan(choice.batch_index * n_vocab, n_vocab);
      chosen.push_back(choose_greedily(raw, choice));
    }
    n_choices_ += static_cast<int64_t>(choices.size());
  }

  int64_t n_choices() const { return n_choices_; }

 private:
  // Greedy from the penalty entries, the way the GPU applies them.
  static SampledToken choose_greedily(std::span<const float> raw, const TokenChoice& choice) {
    std::vector<float> row(raw.begin(), raw.end());
    const SamplingParams& p = choice.params;
    for (const PenaltyCount& entry : choice.penalties) {
      float& logit = row[static_cast<size_t>(entry.id)];
      if (entry.repeated) {
        logit = logit > 0.0f ? logit / p.repetition_penalty : logit * p.repetition_penalty;
      }
      if (entry.n_generated > 0) {
        logit -= static_cast<float>(entry.n_generated) * p.frequency_penalty + p.presence_penalty;
      }
    }
    SampledToken token;
    for (size_t i = 1; i < row.size(); ++i) {
      if (row[i] > row[static_cast<size_t>(token.id)]) token.id = static_cast<int32_t>(i);
    }
    if (!choice.with_logprobs) return token;
    const float max_raw = *std::max_element(raw.begin(), raw.end());
    double total = 0.0;
    for (float logit : raw) total += std::exp(logit - max_raw);
    const double normalizer = static_cast<double>(max_raw) + std::log(total);
    auto logprob = [&](int32_t id) {
      return static_cast<float>(static_cast<double>(raw[static_cast<size_t>(id)]) - normalizer);
    };
    token.logprob = logprob(token.id);
    std::vector<int32_t> top;
    most_likely_ids(raw, static_cast<size_t>(p.n_logprobs), top);
    for (int32_t id : top) token.top.push_back({.id = id, .logprob = logprob(id)});
    return token;
  }

  Backend& inner_;
  std::vector<float> logits_;
  int64_t n_choices_ = 0;
};

// Requests of several prompt lengths (long ones prefill in several chunks,
// so steps mix sampling and non-sampling chunks), with penalties and logprobs.
std::vector<GenerateRequest> requests(bool penalties = true) {
  std::vector<GenerateRequest> out;
  for (int i = 0; i < 6; ++i) {
    GenerateRequest r = request_for(i, i % 2 == 0 ? 40 : 300, 12);
    if (penalties && i % 3 == 1) r.sampling.repetition_penalty = 1.3f;
    if (penalties && i % 3 == 2) {
      r.sampling.frequency_penalty = 0.5f;
      r.sampling.presence_penalty = 0.25f;
    }
    if (i >= 3) {
      r.logprobs = true;
      r.sampling.n_logprobs = 3;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::map<int, testing::Outcome> run(Backend& backend, BlockPool& blocks,
                                    const SchedulerOptions& scheduler, bool penalties = true) {
  Engine engine(backend, blocks, test_model().tokenizer(),
                EngineOptions{.scheduler = scheduler, .check_integrity = true});
  Collector collector;
  const std::vector<GenerateRequest> all = requests(penalties);
  for (size_t i = 0; i < all.size(); ++i) {
    engine.submit(all[i], collector.callback(static_cast<int>(i)));
  }
  return collector.wait(static_cast<int>(all.size()));
}

TEST(EngineTokenChoiceTest, ChoosingBackendGetsTheSamplersStateAndItsTokensGoOut) {
  const auto runtime = make_runtime(
      test_model(), RuntimeOptions{.kv_layout = kv_layout_for(test_model().config()),
                                   .n_kv_blocks = 1024, .n_threads = 2,
                                   .backend = BackendChoice::kCpu});
  SchedulerOptions scheduler;
  scheduler.model_fingerprint = test_fingerprint(*runtime);
  scheduler.max_batch_tokens = 128;  // long prompts prefill over several steps

  const auto plain = run(runtime->backend(), runtime->kv_blocks(), scheduler);
  HostChoosingBackend choosing(runtime->backend());
  const auto chosen = run(choosing, runtime->kv_blocks(), scheduler);

  EXPECT_EQ(choosing.n_choices(), 6 * 12);  // one per generated token, none for prefill chunks
  ASSERT_EQ(chosen.size(), plain.size());
  for (const auto& [i, outcome] : plain) {
    const testing::Outcome& other = chosen.at(i);
    EXPECT_EQ(other.tokens, outcome.tokens) << "request " << i;
    ASSERT_EQ(other.logprobs.size(), outcome.logprobs.size()) << "request " << i;
    for (size_t t = 0; t < outcome.logprobs.size(); ++t) {
      EXPECT_EQ(other.logprobs[t].id, outcome.logprobs[t].id);
      EXPECT_NEAR(other.logprobs[t].logprob, outcome.logprobs[t].logprob, 1e-6);
      ASSERT_EQ(other.logprobs[t].top.size(), 3u);
      for (size_t k = 0; k < 3; ++k) {
        EXPECT_EQ(other.logprobs[t].top[k].id, outcome.logprobs[t].top[k].id);
      }
    }
  }
  // The penalties change tokens here, so passing them on is tested too.
  const auto unpenalized = run(runtime->backend(), runtime->kv_blocks(), scheduler, false);
  int n_changed = 0;
  for (int i : {1, 2, 4, 5}) n_changed += unpenalized.at(i).tokens != plain.at(i).tokens ? 1 : 0;
  EXPECT_GT(n_changed, 0);
}

}  // namespace
}  // namespace strata
