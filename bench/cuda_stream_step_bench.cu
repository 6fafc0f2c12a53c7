// What a batch-1 decode step could reach as one persistent launch (a
// "megakernel") that streams the weights through shared memory across the
// dependencies between its steps: is one worth building?
//
// A model of the step, not the step. One block an SM, its warps each with a
// ring of kStages steps in shared memory, filled by cp.async. A warp step is
// the one-token Q4_K kernel's (cuda_kquant_block_lanes.cu): 32 blocks of
// 144 bytes, a block a lane, dotted with an int8 x by dp4a. A layer's phases
// are the decode step's, with its dependencies: each block waits until the
// blocks of the phase before have counted themselves done (release/acquire
// counters), stages x (reads through L2 what that phase wrote), sums its
// warps' share of the phase's weights, writes its outputs, and counts
// itself done. Attention is a phase with no weights, run by kAttentionBlocks
// blocks that wait a set time (a stand-in for its chain of dependent steps;
// the real kernel's takes ~10 us a layer at batch 1) while the others only
// count. The bytes are the real models': Llama-3.1-8B in Q4_K (4.5 bits a
// weight) and Llama-3.2-1B in F16 (its bytes summed with Q4_K's arithmetic,
// more than F16 needs), every layer's weights in their own memory, then
// the LM head.
//
// The variants, each timed at attention_us 0, 3, 6 and 9:
// - feed within_phase: a warp asks for a phase's first steps just before
//   it waits for the phase before, never further ahead: a graph of
//   dependent launches at best (whose next kernel loads only as the kernel
//   before leaves its SM), with no launch costs;
// - feed across_phases: the copies run kStages steps ahead through the whole
//   step, so that while a warp waits its ring fills with the next phase's
//   weights and DRAM keeps streaming;
// - across_phases_l2_N_steps: also asks L2 (cp.async.bulk.prefetch.L2) for
//   the warp's step N past each copy, a lookahead not bounded by shared
//   memory;
// - split 8: products split along their rows' length so that a block waits
//   only for the part of the phase before that it reads (attention and O
//   per kv head, down per eighth of gate/up), the phase after adding the
//   partial sums as it stages x.
// And stream_only: every step's weights in one phase, no waits: what the
// rings stream at best. A traced launch times each block's wait, staging
// and work, phase by phase (print_trace). The figure: the weights' bytes
// at the copy rate (measured in the same run, read + written, as `strata
// bench` counts it) over the step's time, the fraction of the roofline the
// step reaches. Prints JSON. Sized for sm_90 (up to 176 KB of shared memory a block).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "bench/cuda_bench_common.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/gpu_ceilings.h"

namespace strata {
namespace {

using bench::add_release;
using bench::load_acquire;

constexpr int kStepBlocks = 32;   // Q4_K blocks a warp step: one a lane
constexpr int kBlockBytes = 144;  // a Q4_K block: 128 bytes of quants, 16 of meta
constexpr int kStepBytes = kStepBlocks * kBlockBytes;
constexpr int kChunksALane = kStepBytes / 16 / 32;  // 16-byte copies a lane a step
constexpr int kMaxRowLength = 14336;                // the longest x a phase stages (8B's down)
constexpr int kAttentionBlocks = 24;                // 8 kv heads x 3 splits at ~200 keys
constexpr int kMaxPhases = 5 * 32 + 1;
constexpr int kOutputs = 1 << 16;  // floats of the outputs' buffer
constexpr int kMaxGroups = 16;     // counters a phase
constexpr int kMaxXVectors = 16;

enum PhaseKind : int { kProduct, kAttention };

struct Phase {
  int kind;
  int row_length;   // the x it stages
  int x_vectors;    // partial sums of x it adds while staging (split products before it)
  int wait_groups;  // 1: every block waits for all of the phase before; G: for 1 / G of it
  int64_t steps;    // warp steps of weights (all warps of all blocks)
  int64_t first;    // its first step, counting every phase's before it
};

struct StepModel {
  Phase phases[kMaxPhases];
  int n_phases;
  int64_t total_steps;
};

struct Params {
  const uint8_t* weights;  // total_steps * kStepBytes
  const float* x;          // [kMaxXVectors][kMaxRowLength]
  float* outputs;          // [kOutputs]
  uint32_t* counters;      // [phase][group]: blocks done (zeroed before each launch)
  int64_t attention_ns;
  bool across_phases;
  int l2_ahead;     // > 0: each copy also asks L2 for the warp's step this many further on
  uint64_t* trace;  // null, or [phase][block][4] times (ns): see Mark
};

// The times a traced launch records, by each block's thread 0, a phase: before
// its wait, after it, after x is staged, after the block's work.
enum Mark : int { kWaits, kWaited, kStaged, kDone, kMarks };

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void copy_16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
// sm_90's bulk prefetch; before sm_90 a no-op (the bench is timed on sm_90).
__device__ __forceinline__ void prefetch_l2(const void* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(src), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most `allowed` of the lane's copy groups are in flight.
template <int kStages>
__device__ __forceinline__ void wait_copies(int allowed) {
  static_assert(kStages <= 6);
  switch (allowed) {
    case 0:
      asm volatile("cp.async.wait_group 0;\n" ::: "memory");
      break;
    case 1:
      asm volatile("cp.async.wait_group 1;\n" ::: "memory");
      break;
    case 2:
      asm volatile("cp.async.wait_group 2;\n" ::: "memory");
      break;
    case 3:
      asm volatile("cp.async.wait_group 3;\n" ::: "memory");
      break;
    case 4:
      asm volatile("cp.async.wait_group 4;\n" ::: "memory");
      break;
    default:
      asm volatile("cp.async.wait_group 5;\n" ::: "memory");
      break;
  }
}

// A warp's steps of a phase: an even share of the phase's, in order.
struct Share {
  int64_t begin, end;  // phase-relative
};
__device__ __forceinline__ Share share_of(const Phase& ph, int64_t warp_id, int64_t n_warps) {
  return {warp_id * ph.steps / n_warps, (warp_id + 1) * ph.steps / n_warps};
}

// The warp's walk through its steps of every phase, in order: the copies'
// cursor runs ahead of the sums' by up to kStages steps.
struct Walk {
  int phase;
  int64_t step;   // phase-relative; end of the share: move to the next phase
  int64_t count;  // the warp's steps walked before this one, over all phases
};

__device__ __forceinline__ void settle(Walk& w, const StepModel& m, int64_t warp_id,
                                       int64_t n_warps) {
  while (w.phase < m.n_phases && w.step >= share_of(m.phases[w.phase], warp_id, n_warps).end) {
    ++w.phase;
    if (w.phase < m.n_phases) w.step = share_of(m.phases[w.phase], warp_id, n_warps).begin;
  }
}

// The lane's part of step `w` into `stage` (a shared address): chunk
// lane + 32 k of the step's bytes.
__device__ __forceinline__ void copy_step(const Params& p, const StepModel& m, const Walk& w,
                                          uint32_t stage) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const uint8_t* src = p.weights + (m.phases[w.phase].first + w.step) * kStepBytes;
#pragma unroll
  for (int k = 0; k < kChunksALane; ++k)
    copy_16(stage + 16 * (lane + 32 * k), src + 16 * (lane + 32 * k));
}

// The lane's block (bytes 144 lane .. + 143 of the stage) dotted with x's
// int8 block `block`: 8 units of quants, low and high nibbles, as the
// one-token Q4_K kernel does, then the meta's scale.
__device__ __forceinline__ float block_term(const uint8_t* stage, const int8_t* x, int block) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const uint4* mine = reinterpret_cast<const uint4*>(stage + kBlockBytes * lane);
  const int4* xb = reinterpret_cast<const int4*>(x + 256 * block);
  int low = 0, high = 0;
#pragma unroll
  for (int m = 0; m < 8; ++m) {
    const uint4 q = mine[m];
    const int4 xl = xb[(2 * m) ^ (block & 7)], xh = xb[(2 * m + 1) ^ (block & 7)];
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
    const int xls[4] = {xl.x, xl.y, xl.z, xl.w}, xhs[4] = {xh.x, xh.y, xh.z, xh.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      low = __dp4a(static_cast<int>(words[i] & 0x0f0f0f0fu), xls[i], low);
      high = __dp4a(static_cast<int>((words[i] >> 4) & 0x0f0f0f0fu), xhs[i], high);
    }
  }
  const uint4 meta = mine[8];
  return __uint_as_float(meta.x & 0x3f7fffffu) * static_cast<float>(low) +
         __uint_as_float(meta.y & 0x3f7fffffu) * static_cast<float>(high);
}

// The blocks of a grid of `blocks` that a phase's work runs in: attention's
// first few, or all.
__host__ __device__ __forceinline__ int working_blocks(const Phase& ph, int blocks) {
  return ph.kind == kAttention ? kAttentionBlocks : blocks;
}
__device__ __forceinline__ int working_blocks(const Phase& ph) {
  return working_blocks(ph, static_cast<int>(gridDim.x));
}

// Of n blocks split into g contiguous groups, block b's (b g / n), and how
// many blocks group c holds.
__device__ __forceinline__ int group_of(int b, int n, int g) { return b * g / n; }
__device__ __forceinline__ int group_size(int c, int n, int g) {
  const auto first = [&](int i) { return (i * n + g - 1) / g; };
  return first(c + 1) - first(c);
}

// Waits, by thread 0, until the blocks of phase `phase` - 1 that this
// block's part of `phase` reads have counted themselves done (all of them,
// or one group); the block's threads then see what they wrote.
__device__ void wait_for_inputs(const Params& p, const StepModel& m, int phase) {
  const Phase& before = m.phases[phase - 1];
  const int g = m.phases[phase].wait_groups;
  const int c = group_of(static_cast<int>(blockIdx.x), working_blocks(m.phases[phase]), g);
  if (threadIdx.x == 0) {
    const uint32_t target = group_size(c, working_blocks(before), g);
    while (load_acquire(p.counters + phase * kMaxGroups + c) < target) {
    }
  }
  __syncthreads();
}

// One warp's ring and the cursors that fill it: copies run up to kStages
// steps ahead of the sums (not past phase `limit`), and, with l2_ahead, L2
// is asked for the step l2_ahead further on than each copy.
template <int kStages>
struct WarpFeed {
  const Params& p;
  const StepModel& m;
  int64_t warp_id, n_warps;
  uint8_t* ring;
  Walk copies{}, asked{};
  int64_t summed = 0;  // the warp's steps summed so far

  __device__ WarpFeed(const Params& params, const StepModel& model, int64_t warp, int64_t warps,
                      uint8_t* warp_ring)
      : p(params), m(model), warp_id(warp), n_warps(warps), ring(warp_ring) {
    copies = {0, share_of(m.phases[0], warp_id, n_warps).begin, 0};
    settle(copies, m, warp_id, n_warps);
    asked = copies;
    for (int i = 0; i < p.l2_ahead; ++i) ask_l2();
  }

  __device__ void ask_l2() {
    if (asked.phase >= m.n_phases) return;
    if (threadIdx.x % 32 == 0) {
      prefetch_l2(p.weights + (m.phases[asked.phase].first + asked.step) * kStepBytes, kStepBytes);
    }
    ++asked.step;
    ++asked.count;
    settle(asked, m, warp_id, n_warps);
  }

  __device__ void copy_ahead(int limit) {
    while (copies.phase < m.n_phases && copies.phase <= limit && copies.count < summed + kStages) {
      const uint8_t* stage = ring + (copies.count % kStages) * kStepBytes;
      copy_step(p, m, copies, static_cast<uint32_t>(__cvta_generic_to_shared(stage)));
      commit_copies();
      if (p.l2_ahead > 0) ask_l2();
      ++copies.step;
      ++copies.count;
      settle(copies, m, warp_id, n_warps);
    }
  }

  // The next step to sum, landed; release() once every lane is done with it.
  __device__ const uint8_t* next(int limit) {
    copy_ahead(limit);
    wait_copies<kStages>(static_cast<int>(copies.count - summed - 1));
    __syncwarp();  // every lane's copies of the step have landed
    return ring + (summed % kStages) * kStepBytes;
  }

  __device__ void release() {
    __syncwarp();  // every lane is done with the stage before it is refilled
    ++summed;
  }
};

// x of a product, from what the phase before wrote (through L2), its partial
// sums added, as int8 into the block's tile.
template <int kThreads>
__device__ void stage_x(const Params& p, const Phase& ph, int8_t* x_tile) {
  for (int i = static_cast<int>(threadIdx.x); i < ph.row_length / 4; i += kThreads) {
    float4 v = __ldcg(reinterpret_cast<const float4*>(p.x) + i);
    for (int j = 1; j < ph.x_vectors; ++j) {
      const float4 w = __ldcg(reinterpret_cast<const float4*>(p.x + j * kMaxRowLength) + i);
      v = make_float4(v.x + w.x, v.y + w.y, v.z + w.z, v.w + w.w);
    }
    reinterpret_cast<char4*>(x_tile)[i] =
        make_char4(static_cast<int8_t>(v.x), static_cast<int8_t>(v.y), static_cast<int8_t>(v.z),
                   static_cast<int8_t>(v.w));
  }
  __syncthreads();
}

// Attention's stand-in: a read of what Q/K/V wrote, attention_ns of waiting,
// a write.
__device__ void attend(const Params& p) {
  if (threadIdx.x != 0) return;
  const uint64_t until = global_ns() + p.attention_ns;
  const float v = __ldcg(p.x + blockIdx.x);
  while (global_ns() < until) {
  }
  p.outputs[blockIdx.x] = v;
}

// The warp's share of a product phase, summed step by step; each step's
// row sum (lanes 0, 8, 16, 24 added, as the real kernel's chains) stored.
template <int kStages>
__device__ float sum_share(const Params& p, const Phase& ph, int limit, const int8_t* x_tile,
                           WarpFeed<kStages>& feed, float chain) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const Share mine = share_of(ph, feed.warp_id, feed.n_warps);
  const int x_blocks = ph.row_length / 256;
  for (int64_t s = mine.begin; s < mine.end; ++s) {
    const uint8_t* stage = feed.next(limit);
    const float term =
        block_term(stage, x_tile, static_cast<int>((s * kStepBlocks + lane) % x_blocks));
    feed.release();
    chain +=
        term + __shfl_down_sync(0xffffffffu, term, 8) + __shfl_down_sync(0xffffffffu, term, 16);
    if (lane == 0) p.outputs[(ph.first + s) % kOutputs] = chain;
  }
  return chain;
}

// Counts this block's part of `phase` done, for the blocks of the next phase
// that wait for it.
__device__ void count_done(const Params& p, const StepModel& m, int phase) {
  if (threadIdx.x != 0 || phase + 1 == m.n_phases) return;
  const int g = m.phases[phase + 1].wait_groups;
  const int c = group_of(static_cast<int>(blockIdx.x), working_blocks(m.phases[phase]), g);
  add_release(p.counters + (phase + 1) * kMaxGroups + c, 1);
}

template <int kWarps, int kStages>
__global__ void __launch_bounds__(32 * kWarps, 1)
    step_kernel(const __grid_constant__ Params p, const __grid_constant__ StepModel m) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int warp = static_cast<int>(threadIdx.x / 32);
  WarpFeed<kStages> feed(p, m, int64_t{blockIdx.x} * kWarps + warp, int64_t{gridDim.x} * kWarps,
                         smem + warp * kStages * kStepBytes);
  int8_t* x_tile = reinterpret_cast<int8_t*>(smem + kWarps * kStages * kStepBytes);
  float chain = 0.0f;
  for (int phase = 0; phase < m.n_phases; ++phase) {
    const Phase& ph = m.phases[phase];
    const auto mark = [&](Mark at) {
      if (p.trace != nullptr && threadIdx.x == 0) {
        p.trace[(int64_t{phase} * gridDim.x + blockIdx.x) * kMarks + at] = global_ns();
      }
    };
    const int limit = p.across_phases ? m.n_phases : phase;
    feed.copy_ahead(limit);
    mark(kWaits);
    const bool works = static_cast<int>(blockIdx.x) < working_blocks(ph);
    if (phase > 0 && works) wait_for_inputs(p, m, phase);
    mark(kWaited);
    if (ph.kind == kAttention) {
      if (works) attend(p);
      mark(kStaged);
    } else {
      stage_x<32 * kWarps>(p, ph, x_tile);
      mark(kStaged);
      chain = sum_share(p, ph, limit, x_tile, feed, chain);
    }
    __syncthreads();  // the block's outputs, before its count; x_tile is free again
    mark(kDone);
    if (works) count_done(p, m, phase);
  }
}

// The phases of one batch-1 step. Bytes a weight: 4.5 / 8 (Q4_K) or 2 (F16).
struct ModelShape {
  const char* name;
  int n_layers, n_embd, n_ffn, n_heads, n_kv_heads, head_dim, n_vocab;
  double bytes_a_weight;
};

// split: 1, every phase waits for all of the one before; S > 1, the
// products that allow it are split along their rows' length, so that a block
// waits only for the part of the phase before that it reads, and the phase
// after adds the parts' partial sums while it stages x: attention for its kv
// head's Q/K/V, O for its kv head's attention, down for one S-th of gate/up.
StepModel step_model(const ModelShape& s, int split) {
  StepModel m{};
  const auto add = [&](int kind, int row_length, int x_vectors, int wait_groups, double weights) {
    Phase& ph = m.phases[m.n_phases++];
    ph.kind = kind;
    ph.row_length = row_length;
    ph.x_vectors = x_vectors;
    ph.wait_groups = wait_groups;
    ph.steps = static_cast<int64_t>(weights * s.bytes_a_weight / kStepBytes + 0.5);
    ph.first = m.total_steps;
    m.total_steps += ph.steps;
  };
  const double d = s.n_embd, qkv = (s.n_heads + 2.0 * s.n_kv_heads) * s.head_dim;
  const int heads = split > 1 ? s.n_kv_heads : 1;
  for (int layer = 0; layer < s.n_layers; ++layer) {
    add(kProduct, s.n_embd, layer == 0 ? 1 : split, 1, qkv * d);
    add(kAttention, s.n_embd, 1, heads, 0);
    add(kProduct, s.n_embd / heads, 1, heads, d * s.n_heads * s.head_dim);
    add(kProduct, s.n_embd, heads, 1, 2.0 * s.n_ffn * d);
    add(kProduct, s.n_ffn / split, 1, split, d * s.n_ffn);
  }
  add(kProduct, s.n_embd, split, 1, static_cast<double>(s.n_vocab) * d);
  return m;
}

struct Buffers {
  DeviceBuffer weights, x, outputs, counters;
};

// How the rings are fed (see the top of the file), and how far ahead L2 is asked.
struct Feed {
  bool across_phases;
  int l2_ahead;
  const char* name;
};

template <int kWarps, int kStages>
void launch_step(const StepModel& m, const Feed& feed, int64_t attention_ns, Buffers& b,
                 uint64_t* trace, cudaStream_t stream) {
  const auto kernel = step_kernel<kWarps, kStages>;
  const int smem = kWarps * kStages * kStepBytes + kMaxRowLength;
  STRATA_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  STRATA_CUDA_CHECK(cudaMemsetAsync(b.counters.data(), 0, b.counters.bytes(), stream));
  Params p{b.weights.as<uint8_t>(),
           b.x.as<float>(),
           b.outputs.as<float>(),
           b.counters.as<uint32_t>(),
           attention_ns,
           feed.across_phases,
           feed.l2_ahead,
           trace};
  void* args[] = {&p, const_cast<StepModel*>(&m)};
  // Cooperative: every block resident, or the launch fails (the counters' spins need it).
  STRATA_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
                                                cuda_multiprocessor_count(), 32 * kWarps, args,
                                                smem, stream));
}

template <int kWarps, int kStages>
double step_us(const StepModel& m, const Feed& feed, int64_t attention_ns, Buffers& b,
               cudaStream_t stream) {
  return bench::median_us(
      stream, 11, [&] { launch_step<kWarps, kStages>(m, feed, attention_ns, b, nullptr, stream); });
}

// One traced launch: where a layer's time goes, phase by phase, averaged over
// the layers after the first. A phase's span runs from the last block to
// finish the phase before to the last block to finish it; its edge, from
// there to the first block whose wait returns (all-to-all waits); its
// stage and work, the blocks' mean times to stage x and to sum their steps
// (and the longest work); its weights at the copy rate, for comparison.
template <int kWarps, int kStages>
void print_trace(const ModelShape& shape, const StepModel& m, const Feed& feed,
                 int64_t attention_ns, double copy_gb_per_s, Buffers& b, cudaStream_t stream) {
  const int blocks = cuda_multiprocessor_count();
  const size_t n = static_cast<size_t>(m.n_phases) * blocks * kMarks;
  DeviceBuffer trace(n * sizeof(uint64_t));
  launch_step<kWarps, kStages>(m, feed, attention_ns, b, trace.as<uint64_t>(), stream);
  std::vector<uint64_t> t(n);
  STRATA_CUDA_CHECK(
      cudaMemcpyAsync(t.data(), trace.data(), trace.bytes(), cudaMemcpyDeviceToHost, stream));
  STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto at = [&](int phase, int block, Mark mark) {
    return static_cast<double>(t[(static_cast<size_t>(phase) * blocks + block) * kMarks + mark]);
  };
  const auto working = [&](int phase) { return working_blocks(m.phases[phase], blocks); };
  const auto last_done = [&](int phase) {
    double latest = 0;
    for (int b = 0; b < working(phase); ++b) latest = std::max(latest, at(phase, b, kDone));
    return latest;
  };
  const char* names[] = {"qkv", "attention", "o", "gate_up", "down"};
  std::printf("      {\"feed\": \"%s\", \"attention_us\": %.1f", feed.name, attention_ns / 1e3);
  for (int kind = 0; kind < 5; ++kind) {
    double span = 0, edge = 0, stage = 0, work = 0, work_max = 0, weights = 0;
    int layers = 0;
    for (int phase = 5 + kind; phase < 5 * shape.n_layers; phase += 5, ++layers) {
      const double start = last_done(phase - 1);
      span += last_done(phase) - start;
      double first_waited = 1e300, longest = 0, stage_sum = 0, work_sum = 0;
      for (int b = 0; b < working(phase); ++b) {
        first_waited = std::min(first_waited, at(phase, b, kWaited));
        stage_sum += at(phase, b, kStaged) - at(phase, b, kWaited);
        const double w = at(phase, b, kDone) - at(phase, b, kStaged);
        work_sum += w;
        longest = std::max(longest, w);
      }
      edge += first_waited - start;
      stage += stage_sum / working(phase);
      work += work_sum / working(phase);
      work_max += longest;
      weights += static_cast<double>(m.phases[phase].steps) * kStepBytes / copy_gb_per_s;
    }
    std::printf(
        ",\n       \"%s\": {\"span_us\": %.2f, \"edge_us\": %.2f, \"stage_us\": %.2f, "
        "\"work_us\": %.2f, \"longest_work_us\": %.2f, \"weights_at_copy_rate_us\": %.2f}",
        names[kind], span / layers / 1e3, edge / layers / 1e3, stage / layers / 1e3,
        work / layers / 1e3, work_max / layers / 1e3, weights / layers / 1e3);
  }
  std::printf("}");
}

template <int kWarps, int kStages>
void print_config(const ModelShape& shape, double copy_gb_per_s, Buffers& b, cudaStream_t stream,
                  bool last) {
  const StepModel m = step_model(shape, 1);
  const double bytes = static_cast<double>(m.total_steps) * kStepBytes;
  const double roofline_us = bytes / (copy_gb_per_s * 1e3);
  // A step with no waits between its phases: what the rings stream at best.
  StepModel flat{};
  flat.n_phases = 1;
  flat.phases[0] = {kProduct, shape.n_embd, 1, 1, m.total_steps, 0};
  flat.total_steps = m.total_steps;
  const Feed feeds[] = {{false, 0, "within_phase"},
                        {true, 0, "across_phases"},
                        {true, 4, "across_phases_l2_4_steps"},
                        {true, 8, "across_phases_l2_8_steps"},
                        {true, 16, "across_phases_l2_16_steps"}};
  const double stream_us = step_us<kWarps, kStages>(flat, feeds[1], 0, b, stream);
  std::printf(
      "    {\"model\": \"%s\", \"warps\": %d, \"stages\": %d, \"weights_mb\": %.1f, "
      "\"roofline_us\": %.1f, \"stream_only\": {\"us\": %.1f, \"fraction\": %.3f},\n",
      shape.name, kWarps, kStages, bytes / 1e6, roofline_us, stream_us, roofline_us / stream_us);
  std::printf("     \"traces\": [\n");
  print_trace<kWarps, kStages>(shape, m, feeds[1], 6000, copy_gb_per_s, b, stream);
  std::printf(",\n");
  print_trace<kWarps, kStages>(shape, m, feeds[3], 6000, copy_gb_per_s, b, stream);
  std::printf("],\n     \"steps\": [");
  const int64_t attention_ns[] = {0, 3000, 6000, 9000};
  bool first = true;
  for (const int split : {1, 8}) {
    const StepModel model = step_model(shape, split);
    for (const Feed& feed : feeds) {
      for (const int64_t ns : attention_ns) {
        const double us = step_us<kWarps, kStages>(model, feed, ns, b, stream);
        std::printf(
            "%s\n       {\"split\": %d, \"feed\": \"%s\", \"attention_us\": %.1f, "
            "\"us\": %.1f, \"us_a_layer\": %.2f, \"fraction\": %.3f}",
            first ? "" : ",", split, feed.name, ns / 1e3, us, us / shape.n_layers,
            roofline_us / us);
        first = false;
      }
    }
  }
  std::printf("]}%s\n", last ? "" : ",");
}

int run() {
  int n_devices = 0;
  if (cudaGetDeviceCount(&n_devices) != cudaSuccess || n_devices == 0) {
    std::fprintf(stderr, "cuda_stream_step_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  STRATA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::optional<GpuCeilings> ceilings = measure_gpu_ceilings();
  if (!ceilings) {
    std::fprintf(stderr, "cuda_stream_step_bench: the ceilings could not be measured\n");
    return 1;
  }
  const ModelShape shapes[] = {
      {"llama-3.1-8b-q4_k", 32, 4096, 14336, 32, 8, 128, 128256, 4.5 / 8},
      {"llama-3.2-1b-f16", 16, 2048, 8192, 32, 8, 64, 128256, 2.0},
  };
  size_t max_bytes = 0;
  for (const ModelShape& s : shapes) {
    max_bytes = std::max(max_bytes, static_cast<size_t>(step_model(s, 1).total_steps) * kStepBytes);
  }
  Buffers b;
  b.weights.reserve(max_bytes);
  b.x.reserve(kMaxXVectors * kMaxRowLength * sizeof(float));
  b.outputs.reserve(kOutputs * sizeof(float));
  b.counters.reserve(kMaxPhases * kMaxGroups * sizeof(uint32_t));
  STRATA_CUDA_CHECK(cudaMemset(b.weights.data(), 0x5a, max_bytes));
  STRATA_CUDA_CHECK(cudaMemset(b.x.data(), 0, b.x.bytes()));
  STRATA_CUDA_CHECK(cudaMemset(b.counters.data(), 0, b.counters.bytes()));
  cudaStream_t stream;
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::printf("{\"bench\": \"cuda_stream_step\", \"device\": \"%s\", \"sms\": %d,\n", prop.name,
              cuda_multiprocessor_count());
  std::printf("  \"ceiling\": {\"copy_gb_per_s\": %.0f},\n  \"configs\": [\n",
              ceilings->copy_gb_per_s);
  for (int i = 0; i < 2; ++i) {
    print_config<16, 2>(shapes[i], ceilings->copy_gb_per_s, b, stream, false);
    print_config<12, 3>(shapes[i], ceilings->copy_gb_per_s, b, stream, i == 1);
  }
  std::printf("  ]\n}\n");
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace
}  // namespace strata

int main() { return strata::run(); }
