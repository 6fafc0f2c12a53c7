// cuda_kquant_decode (cuda_kquant_decode.h): which kernel takes a product,
// and tokens in passes where their staged x outgrows shared memory. The
// kernels: cuda_kquant_block_lanes.cu (one token of Q4_K),
// cuda_kquant_dp4a.cu (one token of Q6_K), cuda_kquant_mma.cu (two to eight),
// what they share: cuda_kquant_common.cuh.
#include <algorithm>
#include <climits>

#include "common/check.h"
#include "gpu/cuda_device.h"
#include "kernels/cuda/cuda_kquant_common.cuh"
#include "kernels/cuda/cuda_kquant_decode.h"

namespace strata {
namespace {

using kquant::KQuantParams;

// Up to this many values of x (tokens x row length), a product's thread
// blocks quantize x sooner than a launch before it would (see
// cuda_kquant_decode_wants_staged_x).
constexpr int64_t kMaxValuesStagedByBlocks = 4096;

// Tokens a launch stages at once: all of them unless their x outgrows the
// device's shared memory (long rows, many tokens); then in passes, each
// token's result the same.
int64_t tokens_per_pass(const CudaWeightMatrix& w) {
  return (cuda_max_shared_memory_per_block() - kquant::kMmaPartialBytes) /
         kquant::staged_token_bytes(w.row_length());
}

void run_kquant(const CudaWeightMatrix& w, const float* x, const uint8_t* x_staged,
                int64_t n_tokens, float* y, int64_t swiglu_n, cudaStream_t stream) {
  const int64_t n_outputs = swiglu_n > 0 ? swiglu_n : w.n_rows();
  const int64_t token_bytes = kquant::staged_token_bytes(w.row_length());
  const int64_t per_pass = std::min(n_tokens, tokens_per_pass(w));
  for (int64_t t0 = 0; t0 < n_tokens; t0 += per_pass) {
    const int64_t n = std::min(per_pass, n_tokens - t0);
    const float* xt = x + t0 * w.row_length();
    const KQuantParams p{.w = cuda_layout::matrix_view(w),
                         .x = xt,
                         .y = y + t0 * n_outputs,
                         .n_tokens = static_cast<int>(n),
                         .token_bytes = static_cast<int>(token_bytes),
                         .x_aligned = reinterpret_cast<uintptr_t>(xt) % 16 == 0,
                         .swiglu_n = swiglu_n,
                         .x_staged = x_staged != nullptr ? x_staged + t0 * token_bytes : nullptr};
    if (n > kquant::kMaxDp4aTokens) {
      kquant::launch_mma_decode(p, n_outputs, w.type(), stream);
    } else if (w.type() == WeightType::kQ4_K) {
      kquant::launch_block_lane_decode(p, n_outputs, stream);
    } else {
      kquant::launch_dp4a_decode(p, n_outputs, stream);
    }
  }
}

// A warp per block of 256 values of a token's x.
__global__ void __launch_bounds__(kquant::kThreads)
    stage_x_kernel(const float* x, int n_items, int row_length, int token_bytes, bool x_aligned,
                   uint8_t* staged) {
  let_next_kernel_start();
  wait_for_prior_kernels();  // x is the kernel before's
  const int item = static_cast<int>(blockIdx.x * kquant::kWarps + threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (item >= n_items) return;  // the whole warp
  const int n_blocks = row_length / kquant::kBlockElems;
  const int token = item / n_blocks, block = item % n_blocks;
  float v[8];
  kquant::load_eight(
      x + static_cast<int64_t>(token) * row_length + kquant::kBlockElems * block + 8 * lane,
      x_aligned, v);
  kquant::stage_q8k_block(staged + static_cast<int64_t>(token) * token_bytes, row_length, block, v,
                          lane);
}

}  // namespace

void cuda_kquant_stage_x(const float* x, int64_t n_tokens, int64_t row_length, uint8_t* staged,
                         cudaStream_t stream) {
  const int64_t token_bytes = cuda_kquant_staged_x_bytes(row_length);
  const int64_t n_items = n_tokens * (row_length / kquant::kBlockElems);
  STRATA_CHECK(n_tokens >= 1 && n_tokens * token_bytes <= INT_MAX, n_tokens, " tokens of ",
               row_length, " values to stage");
  launch_dependent(
      stage_x_kernel, dim3(static_cast<unsigned>(kquant::ceil_div(n_items, kquant::kWarps))),
      dim3(kquant::kThreads), 0, stream, x, static_cast<int>(n_items), static_cast<int>(row_length),
      static_cast<int>(token_bytes), reinterpret_cast<uintptr_t>(x) % 16 == 0, staged);
}

bool cuda_kquant_decode_supports(const CudaWeightMatrix& w, int64_t n_tokens) {
  return (w.type() == WeightType::kQ4_K || w.type() == WeightType::kQ6_K) && n_tokens >= 1 &&
         n_tokens <= kMaxKQuantDecodeTokens && w.row_length() <= INT_MAX && w.n_rows() <= INT_MAX &&
         tokens_per_pass(w) >= 1;
}

int64_t cuda_kquant_staged_x_bytes(int64_t row_length) {
  STRATA_CHECK(row_length > 0 && row_length % kquant::kBlockElems == 0, "rows of ", row_length,
               " values are not whole Q8_K blocks");
  return kquant::staged_token_bytes(row_length);
}

bool cuda_kquant_decode_wants_staged_x(const CudaWeightMatrix& w, int64_t n_tokens) {
  return n_tokens * w.row_length() > kMaxValuesStagedByBlocks &&
         cuda_kquant_decode_supports(w, n_tokens);
}

void cuda_kquant_decode(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                        cudaStream_t stream, const uint8_t* x_staged) {
  STRATA_CHECK(cuda_kquant_decode_supports(w, n_tokens), "no integer decode kernel for ",
               weight_type_name(w.type()), " with ", n_tokens, " tokens");
  run_kquant(w, x, x_staged, n_tokens, y, 0, stream);
}

bool cuda_kquant_decode_swiglu_supports(const CudaWeightMatrix& w_gate_up, int64_t n_tokens) {
  return w_gate_up.n_rows() % 2 == 0 && cuda_kquant_decode_supports(w_gate_up, n_tokens);
}

void cuda_kquant_decode_swiglu(const CudaWeightMatrix& w_gate_up, const float* x, int64_t n_tokens,
                               float* out, cudaStream_t stream, const uint8_t* x_staged) {
  STRATA_CHECK(cuda_kquant_decode_swiglu_supports(w_gate_up, n_tokens),
               "no fused integer SwiGLU for ", weight_type_name(w_gate_up.type()), " with ",
               w_gate_up.n_rows(), " rows and ", n_tokens, " tokens");
  run_kquant(w_gate_up, x, x_staged, n_tokens, out, w_gate_up.n_rows() / 2, stream);
}

}  // namespace strata
