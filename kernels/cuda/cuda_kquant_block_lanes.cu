// The one-token Q4_K decode kernel of cuda_kquant_decode (shared parts:
// cuda_kquant_common.cuh): a whole Q4_K block a lane.
//
// Why a whole block: at one token the product is one pass over the weights,
// and what limits a kernel that reads them is the instructions it spends a
// byte. Four lanes a block (the quarter layout the Q6_K kernel of
// cuda_kquant_dp4a.cu keeps) pay the shuffles, the block's float term and
// the loop's bookkeeping for every 32 bytes of quants; a lane with a whole
// block pays them once for 128, and needs no shuffle to add its sub-blocks.
//
// A warp step is 32 blocks: rows of 32 blocks or more take a step per 32 of
// a row's blocks, shorter rows share a step (G lanes a row, G the power of
// two >= the row's blocks; 32 / G rows a step). The step's quants and meta
// come into a ring in shared memory by cp.async, coalesced (lane l copies
// 16-byte chunk l % 8 of the step's blocks l / 8, l / 8 + 4, ...), with each
// block's chunks rotated by its place in the step so that the lanes reading
// their own blocks' chunk m meet in all 8 bank groups; a warp's ring holds
// kStages steps, one summed while the next arrives. Lane l then dots its block with x (staged Q8_K,
// whose 16-byte units are swizzled by their block: the same unit of 8 consecutive blocks lies in 8
// bank groups), applies the 8 sub-block scales and minimums to the integer sums, and forms the
// block's f32 term as block_term does.
//
// Same bits as the mma kernel (batch invariance): the terms of a row's blocks
// j, j + 8, j + 16, ... are added in order by lane j of the row's group (its
// own term, then those of the lanes 8, 16 and 24 above it), starting from
// +0, and the 8 sums as sum_of_eight adds them (a butterfly over lane bits 2,
// 1, 0). Lanes past a row's blocks or the warp's rows have zero-filled meta
// (their quants are bytes never used): their terms are zero and leave every
// sum as it was.
#include "kernels/cuda/cuda_kquant_common.cuh"
#include "kernels/cuda/cuda_swiglu.cuh"

namespace strata::kquant {
namespace {

// Warps of a thread block, one block an SM: each block stages x for itself
// where it is not staged before the product (see cuda_kquant_dp4a.cu).
constexpr int kLaneWarps = 16;
constexpr int kLaneThreads = 32 * kLaneWarps;
// Steps of a warp in its ring: one computed while the next arrives.
constexpr int kStages = 2;
constexpr int kStepBlocks = 32;
constexpr int kMetaBytes = 16;  // d, dmin, scales[12]
constexpr int kStageBytes = kStepBlocks * (kBlockQuantBytes + kMetaBytes);
constexpr int kRingBytes = kLaneWarps * kStages * kStageBytes;
// Past staged x: lanes past a row's blocks read x's units as if the row
// went on (their zero scales make any value vanish); this keeps those reads
// inside the allocation.
constexpr int kXOverreadBytes = kStepBlocks * kBlockElems;

// 16 bytes from global to shared memory, asynchronously; zeros where `real`
// is false (src is then never read).
__device__ __forceinline__ void copy_16(uint32_t dst, const void* src, bool real) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(real ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kStages - 1 of the lane's copy groups are in flight.
__device__ __forceinline__ void wait_for_oldest_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1) : "memory");
}

// How a step's 32 lanes split over rows, and how a warp's outputs map to
// groups of rows (a group: the rows of one step, or of S steps).
struct StepShape {
  int lanes_per_row;  // G
  int lane_shift;     // log2 G
  int steps_per_row;  // S: > 1 only when G == 32
  // Rows of a group: `halves` runs of `outputs_per_half` consecutive outputs
  // (with the fused SwiGLU and G < 32, the gate rows, then the up rows of the
  // same outputs; up is the lanes 16 above). With the fused SwiGLU and
  // G == 32, groups alternate: an output's gate row, then its up row.
  int halves;
  int outputs_per_half;
  bool alternating;  // the G == 32 SwiGLU case above
};

__device__ __forceinline__ StepShape step_shape(int n_blocks, bool swiglu) {
  int shift = 0;
  while (shift < 5 && (1 << shift) < n_blocks) ++shift;
  const int rows = kStepBlocks >> shift;
  StepShape s{};
  s.lanes_per_row = 1 << shift;
  s.lane_shift = shift;
  s.steps_per_row = shift == 5 ? (n_blocks + kStepBlocks - 1) / kStepBlocks : 1;
  s.halves = swiglu && rows > 1 ? 2 : 1;
  s.outputs_per_half = rows / s.halves;
  s.alternating = swiglu && rows == 1;
  return s;
}

// A block's 8 sub-block scales or minimums (ggml's get_scale_min_k4), 4 to
// a word: sub-blocks 0..3 from the first word, 4..7 from the second. meta.y,
// z, w are scales[0..3], [4..7], [8..11].
struct SubBlockBytes {
  uint32_t scales[2];
  uint32_t mins[2];
};

__device__ __forceinline__ SubBlockBytes sub_block_bytes(uint4 meta) {
  return {{meta.y & 0x3f3f3f3fu, (meta.w & 0x0f0f0f0fu) | ((meta.y >> 2) & 0x30303030u)},
          {meta.z & 0x3f3f3f3fu, ((meta.w >> 4) & 0x0f0f0f0fu) | ((meta.z >> 2) & 0x30303030u)}};
}

__device__ __forceinline__ int byte_of(uint32_t word, int i) {
  return static_cast<int>(__byte_perm(word, 0u, 0x4440u | static_cast<uint32_t>(i)));
}

// c + the dot product of a's 4 unsigned bytes and b's 4 signed bytes.
__device__ __forceinline__ int dot4_unsigned_signed(uint32_t a, int b, int c) {
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// The lane's block term: its quants (chunk m at weights + rotated(m)), its
// meta, and x's units of its block (unit u at x_unit(u)). Chunk m holds the
// low nibbles of sub-block 2 (m / 2) (x unit 4 (m / 2) + m % 2) and the
// high nibbles of sub-block 2 (m / 2) + 1 (that unit + 2).
struct BlockInputs {
  const uint8_t* weights;  // the block's quants in the ring
  int weight_rotation;
  uint4 meta;
  const int8_t* x_block;  // the block's 256 staged quants (units swizzled)
  int x_rotation;         // the block's index & 7: unit u lies at u ^ x_rotation
  const int* x_sums;      // the block's 8 sub-block sums of x
  float x_scale;
};

__device__ __forceinline__ float block_lane_term(const BlockInputs& in) {
  int dots[8] = {};  // per sub-block; the odd ones 16 times their value
#pragma unroll
  for (int m = 0; m < 8; ++m) {
    const uint4 q = reinterpret_cast<const uint4*>(in.weights)[m ^ in.weight_rotation];
    const int u = 4 * (m / 2) + m % 2;
    const int4 x_low = reinterpret_cast<const int4*>(in.x_block)[u ^ in.x_rotation];
    const int4 x_high = reinterpret_cast<const int4*>(in.x_block)[(u + 2) ^ in.x_rotation];
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
    const int xl[4] = {x_low.x, x_low.y, x_low.z, x_low.w};
    const int xh[4] = {x_high.x, x_high.y, x_high.z, x_high.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      // The high nibbles stay in place, as 16 times their value (unsigned
      // bytes): one instruction a word fewer; the sum divides by 16 exactly.
      dots[2 * (m / 2)] = dot4_unsigned_signed(words[i] & 0x0f0f0f0fu, xl[i], dots[2 * (m / 2)]);
      dots[2 * (m / 2) + 1] =
          dot4_unsigned_signed(words[i] & 0xf0f0f0f0u, xh[i], dots[2 * (m / 2) + 1]);
    }
  }
  const SubBlockBytes s = sub_block_bytes(in.meta);
  const int4 sums_low = reinterpret_cast<const int4*>(in.x_sums)[0];
  const int4 sums_high = reinterpret_cast<const int4*>(in.x_sums)[1];
  const int sums[8] = {sums_low.x,  sums_low.y,  sums_low.z,  sums_low.w,
                       sums_high.x, sums_high.y, sums_high.z, sums_high.w};
  int scaled = 0, shifted = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int dot = j % 2 == 0 ? dots[j] : dots[j] >> 4;
    scaled += byte_of(s.scales[j / 4], j % 4) * dot;
    shifted += byte_of(s.mins[j / 4], j % 4) * sums[j];
  }
  return block_term(in.meta.x, in.x_scale, scaled, shifted);
}

// The lane's fixed part of a step's copies: chunk k (of 8) is chunk
// lane % 8 of the step's block slot 4k + lane / 8, which lands at
// destination(k) in a stage. Its source, from the first row of its half
// (halves of 16 slots when there are two): where a row's blocks fill its
// lanes (G = 32, or G = the row's blocks: rows are contiguous) slot after
// slot, 16 * lane + 512 * (k % kHalfChunks); otherwise row by row.
template <bool kDense>
struct CopyPlan {
  int halves;
  int lane_shift;
  int lanes_per_row;
  int64_t quant_row_bytes;
  uint32_t destination_even, destination_odd;  // + 512 k
  // The lane's own block (slot `lane`): its meta's source offset, row and
  // block, and its half.
  int meta_source;
  int row;
  int block;
  int half;

  __device__ uint32_t destination(int k) const {
    return (k % 2 == 0 ? destination_even : destination_odd) + 512 * k;
  }

  __device__ int64_t source(int k) const {
    const int lane = static_cast<int>(threadIdx.x % 32);
    const int k_in_half = halves == 2 ? k % 4 : k;
    if constexpr (kDense) return 16 * lane + 512 * k_in_half;
    const int slot = 4 * k_in_half + lane / 8;
    return (slot >> lane_shift) * quant_row_bytes +
           kBlockQuantBytes * (slot & (lanes_per_row - 1)) + 16 * (lane % 8);
  }
};

template <bool kDense>
__device__ __forceinline__ CopyPlan<kDense> copy_plan(const StepShape& shape, const MatrixView& w,
                                                      int lane) {
  CopyPlan<kDense> plan{};
  plan.halves = shape.halves;
  plan.lane_shift = shape.lane_shift;
  plan.lanes_per_row = shape.lanes_per_row;
  plan.quant_row_bytes = w.quant_row_bytes;
  // Slot 4k + lane / 8 holds its chunk c at c ^ (slot & 7); slot & 7 is
  // lane / 8 + 4 (k % 2).
  const int chunk = lane % 8, slot_low = lane / 8;
  plan.destination_even = kBlockQuantBytes * slot_low + 16 * (chunk ^ slot_low);
  plan.destination_odd = kBlockQuantBytes * slot_low + 16 * (chunk ^ (slot_low + 4));
  const int row = lane >> shape.lane_shift;
  plan.half = row / shape.outputs_per_half;
  plan.row = row - plan.half * shape.outputs_per_half;
  plan.block = lane & (shape.lanes_per_row - 1);
  plan.meta_source = static_cast<int>(plan.row * w.meta_row_bytes) + kMetaBytes * plan.block;
  return plan;
}

// A group of rows: its halves' first output and row, and how many of the
// half's outputs are real.
struct Group {
  int64_t first_output;
  int64_t first_row, first_up_row;  // of the halves
  int n_outputs;
  bool up;  // alternating groups: this one is an up row
};

__device__ __forceinline__ Group group_at(int g, const StepShape& shape, int64_t first,
                                          int n_outputs_mine, int64_t swiglu_n) {
  const int index = shape.alternating ? g >> 1 : g;
  Group group{};
  group.first_output = first + int64_t{index} * shape.outputs_per_half;
  group.n_outputs =
      min(shape.outputs_per_half, static_cast<int>(first + n_outputs_mine - group.first_output));
  group.up = shape.alternating && (g & 1) != 0;
  group.first_row = group.first_output + (group.up ? swiglu_n : 0);
  group.first_up_row = group.first_output + swiglu_n;
  return group;
}

// The lane's copies of step s of a group into the stage at `stage` (a
// shared address). Quants are copied whether or not their block is real:
// past the warp's rows or a row's blocks they are other rows' bytes, or
// the matrix's zero tail (cuda_layout::kQuantsTailBytes), never used: the
// block's meta, zero-filled, zeroes its term.
template <bool kDense>
__device__ __forceinline__ void copy_step(const KQuantParams& p, const CopyPlan<kDense>& plan,
                                          const Group& group, int s, uint32_t stage) {
  const int64_t step_offset = int64_t{kBlockQuantBytes} * kStepBlocks * s;
  const uint8_t* first = p.w.quants + group.first_row * p.w.quant_row_bytes + step_offset;
  const uint8_t* first_up = p.w.quants + group.first_up_row * p.w.quant_row_bytes + step_offset;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const uint8_t* half = plan.halves == 2 && k >= 4 ? first_up : first;
    copy_16(stage + plan.destination(k), half + plan.source(k), true);
  }
  const bool real = plan.row < group.n_outputs && plan.block < p.w.n_blocks - kStepBlocks * s;
  const int64_t row = plan.half == 0 ? group.first_row : group.first_up_row;
  const uint8_t* src = p.w.meta + row * p.w.meta_row_bytes + int64_t{kMetaBytes} * kStepBlocks * s +
                       plan.meta_source;
  const uint32_t lane = threadIdx.x % 32;
  copy_16(stage + kStepBlocks * kBlockQuantBytes + kMetaBytes * lane, real ? src : p.w.meta, real);
}

// The row sums of a step's terms: lane j (< 8) of a row's lanes adds the
// terms of its chain (blocks j, j + 8, ...) in order; at the row's end, the
// 8 chains as sum_of_eight adds them, in every lane j < 8.
__device__ __forceinline__ float add_step_terms(float chain, float term, int lanes_per_row) {
  const float term_8 = __shfl_down_sync(0xffffffffu, term, 8);
  const float term_16 = __shfl_down_sync(0xffffffffu, term, 16);
  const float term_24 = __shfl_down_sync(0xffffffffu, term, 24);
  chain = __fadd_rn(chain, term);
  if (lanes_per_row >= 16) chain = __fadd_rn(chain, term_8);
  if (lanes_per_row == 32) chain = __fadd_rn(__fadd_rn(chain, term_16), term_24);
  return chain;
}

__device__ __forceinline__ float sum_chains(float chain, int lanes_per_row) {
  // Chains past a short row's blocks are +0: leaving them out adds nothing.
  if (lanes_per_row >= 8) chain = __fadd_rn(chain, __shfl_xor_sync(0xffffffffu, chain, 4));
  if (lanes_per_row >= 4) chain = __fadd_rn(chain, __shfl_xor_sync(0xffffffffu, chain, 2));
  if (lanes_per_row >= 2) chain = __fadd_rn(chain, __shfl_xor_sync(0xffffffffu, chain, 1));
  return chain;
}

// kDense: a row's blocks fill its lanes (CopyPlan).
template <bool kDense>
__global__ void __launch_bounds__(kLaneThreads, 1) block_lane_decode_kernel(KQuantParams p) {
  extern __shared__ __align__(16) uint8_t smem[];
  let_next_kernel_start();  // it waits for this kernel's writes before it reads them
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const bool swiglu = p.swiglu_n > 0;
  const StepShape shape = step_shape(p.w.n_blocks, swiglu);
  const int64_t n_outputs = swiglu ? p.swiglu_n : p.w.n_rows;
  // A warp's outputs are one run of consecutive outputs (the runs' lengths
  // differ by at most one).
  const int64_t n_warps = static_cast<int64_t>(gridDim.x) * kLaneWarps;
  const int64_t warp_id = static_cast<int64_t>(blockIdx.x) * kLaneWarps + warp;
  const int64_t first = warp_id * n_outputs / n_warps;
  const int n_mine = static_cast<int>((warp_id + 1) * n_outputs / n_warps - first);
  const int n_groups =
      (n_mine + shape.outputs_per_half - 1) / shape.outputs_per_half * (shape.alternating ? 2 : 1);
  const int n_steps = n_groups * shape.steps_per_row;

  const CopyPlan<kDense> plan = copy_plan<kDense>(shape, p.w, lane);
  uint8_t* ring = smem + warp * kStages * kStageBytes;
  const auto shared_address = [](const void* at) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(at));
  };
  // The copies run kStages - 1 steps ahead of the sums, each with its cursor.
  Cursor copy_at;
  const auto copy = [&](int step) {  // step `step` of the warp into its stage, if it has one
    if (step < n_steps) {
      copy_step(p, plan, group_at(copy_at.row, shape, first, n_mine, p.swiglu_n), copy_at.step,
                shared_address(ring + (step % kStages) * kStageBytes));
      if (++copy_at.step == shape.steps_per_row) {
        copy_at.step = 0;
        ++copy_at.row;
      }
    }
    commit_copies();  // an empty group where there is no step: the waits count groups
  };
#pragma unroll
  for (int step = 0; step < kStages - 1; ++step) copy(step);
  wait_for_prior_kernels();  // x is theirs (the weights above are not)
  uint8_t* x_smem = smem + kRingBytes;
  stage_q8k<kLaneWarps>(p, x_smem);
  __syncthreads();

  const StagedToken x = staged_token(p, x_smem, 0);
  const int x_rotation = plan.block & 7;  // the same in every step (steps are 32 blocks)
  float chain = 0.0f, gate = 0.0f;
  Cursor at;  // row: the group
  for (int step = 0; step < n_steps; ++step) {
    copy(step + kStages - 1);
    wait_for_oldest_copies();
    __syncwarp();  // every lane's copies of this step have landed
    const uint8_t* stage = ring + (step % kStages) * kStageBytes;
    const int block = kStepBlocks * at.step + plan.block;
    BlockInputs in;
    in.weights = stage + kBlockQuantBytes * lane;
    in.weight_rotation = lane & 7;
    in.meta =
        *reinterpret_cast<const uint4*>(stage + kStepBlocks * kBlockQuantBytes + kMetaBytes * lane);
    in.x_block = x.quants + kBlockElems * block;
    in.x_rotation = x_rotation;
    in.x_sums = x.sums + 8 * block;
    in.x_scale = x.scales[min(block, p.w.n_blocks - 1)];
    const float term = block_lane_term(in);
    __syncwarp();  // every lane is done with the stage before it is refilled
    chain = add_step_terms(chain, term, shape.lanes_per_row);
    const int g = at.row;
    if (++at.step < shape.steps_per_row) continue;
    at.step = 0;
    ++at.row;

    const float sum = sum_chains(chain, shape.lanes_per_row);
    chain = 0.0f;
    const Group group = group_at(g, shape, first, n_mine, p.swiglu_n);
    const float up = __shfl_down_sync(0xffffffffu, sum, 16);  // the up half, where there is one
    const bool writes = plan.block == 0 && plan.row < group.n_outputs;
    const int64_t out = group.first_output + plan.row;
    if (!swiglu) {
      if (writes) p.y[out] = sum;
    } else if (shape.alternating) {
      if (!group.up) {
        gate = sum;
      } else if (lane == 0) {
        p.y[out] = silu_times(gate, sum);
      }
    } else if (writes && plan.half == 0) {
      p.y[out] = silu_times(sum, up);
    }
  }
}

}  // namespace

void launch_block_lane_decode(const KQuantParams& p, int64_t n_outputs, cudaStream_t stream) {
  const int64_t smem_bytes = kRingBytes + int64_t{p.token_bytes} + kXOverreadBytes;
  const int n_blocks = p.w.n_blocks;
  const bool dense = n_blocks >= kStepBlocks || (n_blocks & (n_blocks - 1)) == 0;
  launch_over(dense ? block_lane_decode_kernel<true> : block_lane_decode_kernel<false>, n_outputs,
              kLaneWarps, smem_bytes, p, stream, kLaneThreads);
}

}  // namespace strata::kquant
