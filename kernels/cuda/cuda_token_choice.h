// Token choice on the GPU: each logits row of a step becomes its chosen token
// (and, when asked, log-probabilities) on the device, so only those cross the
// bus instead of n_vocab floats a row. The choice is the CPU Sampler's
// (engine/sampler/sampler.h, over kernels/sampling/), step by step: penalties, greedy argmax or
// temperature, top-k, top-p, min-p, then an inverse-CDF draw at a uniform
// number the host draws from the sequence's own generator; log-probabilities
// are those of the raw logits.
//
// Asynchronous on `stream`; the caller copies `out` back.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/sampling/sampling_params.h"

namespace strata {

// One distinct token id of a sequence's prompt and generated tokens, as the
// penalties see it (LogitPenalizer: repetition over prompt ∪ generated, then
// frequency and presence over generated).
struct CudaPenaltyToken {
  int32_t id = 0;
  int32_t repeated = 0;     // 1: the repetition penalty applies (id in prompt or generated)
  int32_t n_generated = 0;  // occurrences among generated tokens (frequency, presence)
  // Written by cuda_choose_tokens, which penalizes the row in place: the id's
  // logit before the penalties, so that the chosen token's log-probability
  // (of the raw logits) survives. Callers leave it at any value.
  float raw_logit = 0.0f;
};

// How one row is chosen: the request's sampling parameters (their seed and
// n_logprobs unused here), plus where the row is.
struct CudaChoiceParams {
  int32_t row = 0;  // the logits row to choose from
  SamplingParams sampling{};
  int32_t penalties_begin = 0;  // this row's entries of the penalty array
  int32_t n_penalties = 0;
  int32_t n_logprobs = -1;  // -1: no log-probabilities; 0..kMaxTopLogprobs: the chosen
                            // token's and this many most likely raw alternatives
  double uniform = 0.0;     // in [0, 1): the draw of a sampled row (unused when greedy)
};

enum class CudaChoiceStatus : int32_t { kOk = 0, kNanLogit = 1, kNoFiniteLogit = 2 };

struct CudaTokenChoice {
  static constexpr int kMaxTopLogprobs = 20;  // SamplingParams::kMaxLogprobs
  int32_t id = 0;
  CudaChoiceStatus status = CudaChoiceStatus::kOk;
  float logprob = 0.0f;  // log_softmax(raw logits)[id], when n_logprobs >= 0
  int32_t n_top = 0;     // = n_logprobs (capped by the vocabulary) when >= 0
  int32_t top_ids[kMaxTopLogprobs] = {};  // most likely first, lower id first among equals
  float top_logprobs[kMaxTopLogprobs] = {};
};

// For i < n_choices: out[i] = the choice of logits row params[i].row, a row
// of n_vocab floats of `logits` ([n_logit_rows][n_vocab], device), with
// penalty entries penalties[params[i].penalties_begin ...] (device; distinct
// ids per row). params, penalties and out are device arrays. The logits rows
// that are chosen from are overwritten (penalized in place), and so are the
// penalty entries' raw_logit fields. penalties may be null when no row has a
// penalty on. n_vocab <= 2^23. Two choices with penalties must not share a
// row (their in-place writes would race).
void cuda_choose_tokens(float* logits, int64_t n_vocab, const CudaChoiceParams* params,
                        int64_t n_choices, CudaPenaltyToken* penalties, CudaTokenChoice* out,
                        cudaStream_t stream);

}  // namespace strata
