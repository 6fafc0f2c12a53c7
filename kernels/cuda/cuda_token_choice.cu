// Token choice on CUDA (kernels/cuda/cuda_token_choice.h): one thread block
// per choice, the CPU Sampler's steps in one launch, nothing sorted.
//
// Every truncation and the draw itself ask one question: walking the row in
// "more likely" order (larger value first, lower id first among equals),
// where does a running count or a running weight first reach a target?
// select_first_reaching answers it with a radix select over an
// order-preserving uint32 key of each value: three passes (12, 10, 10 bits)
// each build a shared-memory histogram of the amounts (counts, or weights in
// fixed point) of the elements whose key matches the digits chosen so far,
// and keep the bin where the target is reached; equal keys are then walked in
// id order. A draw without top-k or top-p walks ids in ascending order, as
// the CPU does: first_reaching_in_id_order, a block prefix scan.
//
// Weights are exp(scaled - max scaled) in float, as on the CPU, summed as
// integers in units of 2^-31 (kWeightScale): integer sums are exact in any
// order, so the block's walks always agree with the totals they were given.
// A weight below 2^-32 counts as 0 and can then not be drawn (it would have
// been with probability < 2^-32 * vocab / total). Against the CPU's double
// sums in id order, and its expf against CUDA's (2 ulp), a top-p cut or a
// draw can therefore differ only when the threshold lies within rounding of
// a boundary.
//
// Passes over a row (n_vocab floats, L2-resident): 1 for the raw checks and
// argmax; +1 for the log normalizer and +4..5 for the top log-probabilities
// when asked; +1 when penalties change the row; then a draw without top-k or
// top-p is 1 more, while top-k, top-p and a draw in more-likely order are
// 3 histogram passes each, +1 when the boundary key is shared by several ids.
#include "kernels/cuda/cuda_token_choice.h"

#include <cmath>
#include <cstdint>

#include "common/check.h"
#include "gpu/cuda_check.h"

namespace strata {
namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Radix digits of a 32-bit key, most significant first; the first pass is the
// widest because all of the row lands in its histogram.
constexpr int kPasses = 3;
__host__ __device__ constexpr int digit_bits(int pass) { return pass == 0 ? 12 : 10; }
__host__ __device__ constexpr int digit_shift(int pass) { return 20 - 10 * pass; }
constexpr int kMaxBins = 1 << 12;
constexpr int kLastBins = 1 << 10;

// Weights w in [0, 1] are summed as round(w * 2^31): one 32-bit word each
// (see add_to_bin), 2^-32 at most from w, itself a float rounded to 2^-25 of
// its value. A 2^23-token vocabulary of weight 1 each sums to 2^54.
constexpr float kWeightScale = 0x1p31f;
constexpr int64_t kMaxVocab = int64_t{1} << 23;

constexpr float kGreedyTemperature = SamplingParams::kGreedyTemperature;

using Amount = unsigned long long;  // a count, or a weight in units of 2^-31

// The last element kept, in more-likely order: an element (key, id) is kept
// when key > this key, or key == this key and id <= this id.
struct Boundary {
  uint32_t key;
  int32_t id;
};
constexpr Boundary kKeepAll = {0u, INT32_MAX};  // key 0 is a NaN's: every value is above

struct ValueAndId {
  float value;
  int32_t id;
};

struct ChoiceShared {
  // Amount per digit of the current pass, in two words (64-bit shared
  // atomics are slow under contention): the sum is high * 2^32 + low.
  uint32_t hist_low[kMaxBins];
  uint32_t hist_high[kMaxBins];
  uint32_t last_count[kLastBins];   // last pass: members per digit
  int32_t last_id[kLastBins];       // last pass: one member's id (the only one when count is 1)
  Amount warp_amounts[kWarps];      // block scans
  double warp_doubles[kWarps];      // block sums
  ValueAndId warp_best[kWarps];     // block argmax
  uint32_t digit;                   // broadcasts
  Amount remaining;
  int32_t found_id;
  float raw_of_chosen;
  int32_t n_collected;
  float top_values[CudaTokenChoice::kMaxTopLogprobs];
  int32_t top_ids[CudaTokenChoice::kMaxTopLogprobs];
};

// Adds `amount` to a histogram bin: the low word with a 32-bit atomic, the
// high word (with the carry when the low word wrapped) only when not 0.
__device__ void add_to_bin(ChoiceShared& s, uint32_t bin, Amount amount) {
  const auto low = static_cast<uint32_t>(amount);
  const uint32_t old_low = atomicAdd(&s.hist_low[bin], low);
  const uint32_t high = static_cast<uint32_t>(amount >> 32) + (old_low + low < old_low ? 1u : 0u);
  if (high != 0) atomicAdd(&s.hist_high[bin], high);
}

__device__ Amount bin_amount(const ChoiceShared& s, int bin) {
  return (static_cast<Amount>(s.hist_high[bin]) << 32) + s.hist_low[bin];
}

// Larger floats give larger keys; -0 and +0 share one key, since the CPU's
// comparisons hold them equal (and then order them by id).
__device__ uint32_t order_key(float value) {
  if (value == 0.0f) value = 0.0f;
  const uint32_t bits = __float_as_uint(value);
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

__device__ bool is_kept(Boundary last, uint32_t key, int32_t id) {
  return key > last.key || (key == last.key && id <= last.id);
}

__device__ Amount to_fixed(float weight) { return __float2ull_rn(weight * kWeightScale); }

// `a` before `b` in more-likely order; a NaN is never before anything.
__device__ bool more_likely(ValueAndId a, ValueAndId b) {
  return a.value > b.value || (a.value == b.value && a.id < b.id);
}

// A row's values as a pass reads them: data[i] through `transform` (the
// identity, or the division by the temperature).
template <typename Transform>
struct RowValues {
  const float* data;
  Transform transform;
  __device__ float operator()(int i) const { return transform(data[i]); }
};
template <typename Transform>
__device__ RowValues<Transform> row_values(const float* data, Transform transform) {
  return {data, transform};
}
struct Unchanged {
  __device__ float operator()(float value) const { return value; }
};
__device__ RowValues<Unchanged> raw_values(const float* data) { return {data, Unchanged{}}; }

// Calls visit(i, values(i)) once for each i in [0, n), in no particular
// order, the block's threads sharing the work. A pass is bound by the latency
// of its L2 loads, so rows that are 16-byte aligned (n_vocab % 4 == 0, as for
// the usual vocabularies) are read as float4s, the tail one float at a time.
// (Two float4s in flight per thread spill registers at 1024 threads.)
template <typename Transform, typename Visit>
__device__ void for_each_value(int n, RowValues<Transform> values, Visit visit) {
  int scalar_begin = 0;
  if (reinterpret_cast<uintptr_t>(values.data) % sizeof(float4) == 0) {
    const int n_vectors = n / 4;
    const auto* vectors = reinterpret_cast<const float4*>(values.data);
    for (int v = threadIdx.x; v < n_vectors; v += kThreads) {
      const float4 four = vectors[v];
      visit(4 * v, values.transform(four.x));
      visit(4 * v + 1, values.transform(four.y));
      visit(4 * v + 2, values.transform(four.z));
      visit(4 * v + 3, values.transform(four.w));
    }
    scalar_begin = 4 * n_vectors;
  }
  for (int i = scalar_begin + threadIdx.x; i < n; i += kThreads) visit(i, values(i));
}

// Exclusive prefix sum over the block in thread order; `total` gets the sum.
__device__ Amount block_exclusive_scan(Amount value, Amount& total, ChoiceShared& s) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  Amount inclusive = value;
  for (int offset = 1; offset < 32; offset *= 2) {
    const Amount other = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane >= offset) inclusive += other;
  }
  __syncthreads();  // warp_amounts may still be read by a previous call's threads
  if (lane == 31) s.warp_amounts[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    Amount warp_inclusive = lane < kWarps ? s.warp_amounts[lane] : 0;
    for (int offset = 1; offset < 32; offset *= 2) {
      const Amount other = __shfl_up_sync(kFullMask, warp_inclusive, offset);
      if (lane >= offset) warp_inclusive += other;
    }
    if (lane < kWarps) s.warp_amounts[lane] = warp_inclusive;
  }
  __syncthreads();
  total = s.warp_amounts[kWarps - 1];
  return (warp > 0 ? s.warp_amounts[warp - 1] : 0) + inclusive - value;
}

__device__ double block_sum(double value, ChoiceShared& s) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(kFullMask, value, offset);
  __syncthreads();
  if (threadIdx.x % 32 == 0) s.warp_doubles[threadIdx.x / 32] = value;
  __syncthreads();
  double total = 0.0;
  for (int w = 0; w < kWarps; ++w) total += s.warp_doubles[w];
  return total;
}

// The largest values(i) over [0, n), lowest id among equals, NaNs ignored;
// all -inf gives id 0, as the CPU's argmax does.
template <typename Transform>
__device__ ValueAndId block_argmax(int n, RowValues<Transform> values, ChoiceShared& s) {
  ValueAndId best = {-INFINITY, INT32_MAX};
  for_each_value(n, values, [&best](int i, float value) {
    const ValueAndId candidate = {value, i};
    if (more_likely(candidate, best)) best = candidate;
  });
  for (int offset = 16; offset > 0; offset /= 2) {
    const ValueAndId other = {__shfl_xor_sync(kFullMask, best.value, offset),
                              __shfl_xor_sync(kFullMask, best.id, offset)};
    if (more_likely(other, best)) best = other;
  }
  __syncthreads();
  if (threadIdx.x % 32 == 0) s.warp_best[threadIdx.x / 32] = best;
  __syncthreads();
  best = s.warp_best[0];
  for (int w = 1; w < kWarps; ++w) {
    if (more_likely(s.warp_best[w], best)) best = s.warp_best[w];
  }
  return best;
}

// Walking ids 0..n-1 in order, the first id at which the running sum of
// amount_at(i) reaches target_of(total), total being the sum of all amounts.
// target_of must return a value in [1, total]. Each thread takes a contiguous
// chunk of ids: one pass sums the chunks, a block scan places them, and the
// one thread whose chunk holds the crossing walks it.
template <typename AmountAt, typename TargetOf>
__device__ int32_t first_reaching_in_id_order(int n, AmountAt amount_at, TargetOf target_of,
                                              ChoiceShared& s) {
  const int chunk = (n + kThreads - 1) / kThreads;
  const int begin = min(n, static_cast<int>(threadIdx.x) * chunk);
  const int end = min(n, begin + chunk);
  Amount local = 0;
  for (int i = begin; i < end; ++i) local += amount_at(i);
  Amount total;
  const Amount before = block_exclusive_scan(local, total, s);
  const Amount target = target_of(total);
  if (threadIdx.x == 0) s.found_id = 0;  // only if target_of broke its contract
  __syncthreads();
  if (before < target && target <= before + local) {
    Amount cumulative = before;
    for (int i = begin; i < end; ++i) {
      cumulative += amount_at(i);
      if (cumulative >= target) {
        s.found_id = i;
        break;
      }
    }
  }
  __syncthreads();
  return s.found_id;
}

// Walking [0, n) in more-likely order of values(i), the element at which
// the running sum of amount_of(i, value, key) (0: not a member) first reaches
// target_of(total), total being the members' sum; target_of must return a
// value in [1, total]. Radix select on the key, then ties in id order.
template <typename Transform, typename AmountOf, typename TargetOf>
__device__ Boundary select_first_reaching(int n, RowValues<Transform> values, AmountOf amount_of,
                                          TargetOf target_of, ChoiceShared& s) {
  uint32_t prefix = 0;  // the digits chosen so far
  uint32_t mask = 0;    // their bits
  Amount remaining = 0; // what the elements with this prefix must still contribute
#pragma unroll 1
  for (int pass = 0; pass < kPasses; ++pass) {
    const int shift = digit_shift(pass);
    const int n_bins = 1 << digit_bits(pass);
    const bool last_pass = pass == kPasses - 1;
    for (int b = threadIdx.x; b < n_bins; b += kThreads) {
      s.hist_low[b] = 0;
      s.hist_high[b] = 0;
      if (last_pass) s.last_count[b] = 0;
    }
    __syncthreads();
    for_each_value(n, values, [&](int i, float value) {
      const uint32_t key = order_key(value);
      if ((key & mask) != prefix) return;
      const Amount amount = amount_of(i, value, key);
      if (amount == 0) return;
      const uint32_t digit = (key >> shift) & (n_bins - 1);
      add_to_bin(s, digit, amount);
      if (last_pass) {
        atomicAdd(&s.last_count[digit], 1u);
        s.last_id[digit] = i;
      }
    });
    __syncthreads();

    // Thread t holds bins n_bins-1-t*per_thread downwards: thread order is
    // more-likely order, so a block scan gives what comes before each bin.
    const int per_thread = n_bins / kThreads;
    const int top_bin = n_bins - 1 - static_cast<int>(threadIdx.x) * per_thread;
    Amount local = 0;
    for (int j = 0; j < per_thread; ++j) local += bin_amount(s, top_bin - j);
    Amount total;
    const Amount before = block_exclusive_scan(local, total, s);
    if (pass == 0) {
      remaining = target_of(total);
      if (threadIdx.x == 0) {  // only if target_of broke its contract
        s.digit = 0;
        s.remaining = 1;
      }
      __syncthreads();
    }
    if (before < remaining && remaining <= before + local) {
      Amount cumulative = before;
      for (int j = 0; j < per_thread; ++j) {
        const Amount in_bin = bin_amount(s, top_bin - j);
        if (cumulative + in_bin >= remaining) {
          s.digit = static_cast<uint32_t>(top_bin - j);
          s.remaining = remaining - cumulative;
          break;
        }
        cumulative += in_bin;
      }
    }
    __syncthreads();
    prefix |= s.digit << shift;
    mask |= static_cast<uint32_t>(n_bins - 1) << shift;
    remaining = s.remaining;
  }

  const uint32_t key = prefix;
  if (s.last_count[s.digit] == 1) return {key, s.last_id[s.digit]};
  const int32_t id = first_reaching_in_id_order(
      n,
      [&](int i) -> Amount {
        const float value = values(i);
        const uint32_t element_key = order_key(value);
        return element_key == key ? amount_of(i, value, element_key) : 0;
      },
      [remaining](Amount) { return remaining; }, s);
  return {key, id};
}

// Penalizes the row's penalty entries in place, as LogitPenalizer::apply does
// (same float operations; no contraction into FMAs), saving each raw logit.
__device__ void apply_penalties(float* row, const CudaChoiceParams& p,
                                CudaPenaltyToken* penalties) {
  const bool repetition = p.sampling.repetition_penalty != 1.0f;
  const bool frequency_or_presence =
      p.sampling.frequency_penalty != 0.0f || p.sampling.presence_penalty != 0.0f;
  for (int j = threadIdx.x; j < p.n_penalties; j += kThreads) {
    CudaPenaltyToken& token = penalties[p.penalties_begin + j];
    float logit = row[token.id];
    token.raw_logit = logit;
    if (repetition && token.repeated != 0) {
      logit = logit > 0.0f ? __fdiv_rn(logit, p.sampling.repetition_penalty)
                           : __fmul_rn(logit, p.sampling.repetition_penalty);
    }
    if (frequency_or_presence && token.n_generated > 0) {
      const float count = static_cast<float>(token.n_generated);
      logit = __fsub_rn(logit, __fadd_rn(__fmul_rn(count, p.sampling.frequency_penalty),
                                         p.sampling.presence_penalty));
    }
    row[token.id] = logit;
  }
  __syncthreads();  // the row is read whole from here on
}

// The n_top most likely raw ids, most likely first, with their log-probabilities.
__device__ void write_top_logprobs(const float* row, int n, int n_top, double log_normalizer,
                                   CudaTokenChoice& out, ChoiceShared& s) {
  const Boundary last = select_first_reaching(
      n, raw_values(row), [](int, float, uint32_t) -> Amount { return 1; },
      [n_top](Amount) { return static_cast<Amount>(n_top); }, s);
  if (threadIdx.x == 0) s.n_collected = 0;
  __syncthreads();
  for_each_value(n, raw_values(row), [&](int i, float value) {
    if (!is_kept(last, order_key(value), i)) return;
    const int slot = atomicAdd(&s.n_collected, 1);
    if (slot < CudaTokenChoice::kMaxTopLogprobs) {
      s.top_values[slot] = value;
      s.top_ids[slot] = i;
    }
  });
  __syncthreads();
  if (threadIdx.x != 0) return;
  ValueAndId top[CudaTokenChoice::kMaxTopLogprobs];
  for (int k = 0; k < n_top; ++k) {  // insertion sort of at most 20
    ValueAndId item = {s.top_values[k], s.top_ids[k]};
    int at = k;
    for (; at > 0 && more_likely(item, top[at - 1]); --at) top[at] = top[at - 1];
    top[at] = item;
  }
  for (int k = 0; k < CudaTokenChoice::kMaxTopLogprobs; ++k) {
    const bool used = k < n_top;
    out.top_ids[k] = used ? top[k].id : 0;
    out.top_logprobs[k] =
        used ? static_cast<float>(static_cast<double>(top[k].value) - log_normalizer) : 0.0f;
  }
}

// The sampled pick (temperature >= kGreedyTemperature) from the penalized
// row: Sampler::pick after its greedy branch, then select_candidates and draw.
__device__ int32_t draw_token(const float* row, int n, const CudaChoiceParams& p,
                              bool has_penalties, ValueAndId raw_best, ChoiceShared& s) {
  const float temperature = p.sampling.temperature;
  const bool scales = temperature != 1.0f;
  const auto scaled_at = row_values(row, [scales, temperature](float value) {
    return scales ? __fdiv_rn(value, temperature) : value;
  });
  // Dividing by a positive temperature keeps the order: the raw maximum
  // scales to the scaled one. The first id holding it is needed only when
  // it overflowed.
  float max_scaled = scales ? __fdiv_rn(raw_best.value, temperature) : raw_best.value;
  int32_t scaled_argmax = raw_best.id;
  if (has_penalties || (scales && !isfinite(max_scaled))) {
    const ValueAndId best = block_argmax(n, scaled_at, s);
    max_scaled = best.value;
    scaled_argmax = best.id;
  }
  if (!isfinite(max_scaled)) return max_scaled > 0.0f ? scaled_argmax : raw_best.id;

  const float min_p = p.sampling.min_p;  // 0 when off: no weight is below it
  // A weight as Sampler's fill_weights computes it, 0 below `floor`.
  const auto weight_amount = [max_scaled](float scaled, float floor) -> Amount {
    const float weight = expf(scaled - max_scaled);
    return weight < floor ? 0 : to_fixed(weight);
  };
  const bool top_k_on = p.sampling.top_k > 0 && p.sampling.top_k < n;
  const bool top_p_on = p.sampling.top_p < 1.0f;
  const double uniform = p.uniform;
  const auto draw_target = [uniform](Amount total) {
    const auto target = static_cast<Amount>(uniform * static_cast<double>(total)) + 1;
    return target < total ? target : total;  // u * total can round up to total
  };

  if (!top_k_on && !top_p_on) {
    return first_reaching_in_id_order(
        n,
        [&](int i) { return weight_amount(scaled_at(i), min_p); },
        draw_target, s);
  }

  Boundary kept = kKeepAll;
  if (top_k_on) {
    const Amount k = static_cast<Amount>(p.sampling.top_k);
    kept = select_first_reaching(
        n, scaled_at, [](int, float, uint32_t) -> Amount { return 1; },
        [k](Amount) { return k; }, s);
  }
  // The kept prefix's weights with a floor: min-p's, or none.
  const auto kept_weight = [&](Boundary last, float floor) {
    return [&, last, floor](int i, float scaled, uint32_t key) -> Amount {
      return is_kept(last, key, i) ? weight_amount(scaled, floor) : 0;
    };
  };
  if (top_p_on) {
    const double top_p = p.sampling.top_p;
    kept = select_first_reaching(
        n, scaled_at, kept_weight(kept, 0.0f),
        [top_p](Amount total) {
          const auto target = static_cast<Amount>(ceil(top_p * static_cast<double>(total)));
          return target < 1 ? Amount{1} : target < total ? target : total;
        },
        s);
  }
  return select_first_reaching(n, scaled_at, kept_weight(kept, min_p), draw_target, s).id;
}

__global__ void __launch_bounds__(kThreads, 1)
    choose_tokens_kernel(float* logits, int n, const CudaChoiceParams* params,
                         CudaPenaltyToken* penalties, CudaTokenChoice* choices) {
  __shared__ ChoiceShared s;
  const CudaChoiceParams p = params[blockIdx.x];
  float* row = logits + static_cast<int64_t>(p.row) * n;
  CudaTokenChoice& out = choices[blockIdx.x];

  // Sampler::sample's contract on the raw logits, in the pass that finds
  // their maximum and where it first is.
  bool has_nan = false;
  const ValueAndId raw_best = block_argmax(n, row_values(row, [&has_nan](float value) {
                                             has_nan |= isnan(value);
                                             return value;
                                           }),
                                           s);
  const bool any_nan = __syncthreads_or(has_nan) != 0;
  if (any_nan || !isfinite(raw_best.value)) {
    if (threadIdx.x == 0) {
      out.id = 0;
      out.status = any_nan ? CudaChoiceStatus::kNanLogit : CudaChoiceStatus::kNoFiniteLogit;
      out.logprob = 0.0f;
      out.n_top = 0;
    }
    return;
  }

  // Log-probabilities are those of the raw logits: all of them before the
  // penalties change the row.
  const bool with_logprobs = p.n_logprobs >= 0;
  double log_normalizer = 0.0;
  int n_top = 0;
  if (with_logprobs) {
    double sum = 0.0;
    for_each_value(n, raw_values(row),
                   [&](int, float value) { sum += expf(value - raw_best.value); });
    log_normalizer = static_cast<double>(raw_best.value) + log(block_sum(sum, s));
    n_top = min(min(p.n_logprobs, n), CudaTokenChoice::kMaxTopLogprobs);
    if (n_top > 0) write_top_logprobs(row, n, n_top, log_normalizer, out, s);
  }

  const bool has_penalties = p.sampling.repetition_penalty != 1.0f ||
                             p.sampling.frequency_penalty != 0.0f ||
                             p.sampling.presence_penalty != 0.0f;
  if (has_penalties) apply_penalties(row, p, penalties);

  int32_t id;
  if (p.sampling.temperature < kGreedyTemperature) {
    id = has_penalties ? block_argmax(n, raw_values(row), s).id : raw_best.id;
  } else {
    id = draw_token(row, n, p, has_penalties, raw_best, s);
  }

  if (with_logprobs) {
    // The chosen id's raw logit: in the row, unless a penalty changed it.
    if (threadIdx.x == 0) s.raw_of_chosen = row[id];
    __syncthreads();
    if (has_penalties) {
      for (int j = threadIdx.x; j < p.n_penalties; j += kThreads) {
        const CudaPenaltyToken& token = penalties[p.penalties_begin + j];
        if (token.id == id) s.raw_of_chosen = token.raw_logit;
      }
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) {
    out.id = id;
    out.status = CudaChoiceStatus::kOk;
    out.logprob = with_logprobs
                      ? static_cast<float>(static_cast<double>(s.raw_of_chosen) - log_normalizer)
                      : 0.0f;
    out.n_top = n_top;
    if (n_top == 0) {
      for (int k = 0; k < CudaTokenChoice::kMaxTopLogprobs; ++k) {
        out.top_ids[k] = 0;
        out.top_logprobs[k] = 0.0f;
      }
    }
  }
}

}  // namespace

void cuda_choose_tokens(float* logits, int64_t n_vocab, const CudaChoiceParams* params,
                        int64_t n_choices, CudaPenaltyToken* penalties, CudaTokenChoice* out,
                        cudaStream_t stream) {
  STRATA_CHECK(n_vocab > 0 && n_vocab <= kMaxVocab, "n_vocab ", n_vocab);
  STRATA_CHECK(n_choices >= 0 && n_choices <= INT32_MAX, "n_choices ", n_choices);
  if (n_choices == 0) return;
  choose_tokens_kernel<<<static_cast<unsigned int>(n_choices), kThreads, 0, stream>>>(
      logits, static_cast<int>(n_vocab), params, penalties, out);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata
