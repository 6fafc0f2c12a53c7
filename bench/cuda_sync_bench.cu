// What one dependency between two steps of a batch-1 decode costs on the
// GPU, by each way a step can wait for the one before:
// - kernel_boundary: a graph of plain launches (stream order);
// - dependent_launch: the same with programmatic dependent launch, as the
//   decode step's kernels are launched (kernels/cuda/cuda_dependent_launch.cuh);
// and, inside one persistent launch whose blocks are all resident:
// - grid_barrier: a fence, an atomic count and a spin on a generation, then
//   a fence (cooperative groups' shape; session 20's chain kernel);
// - release_acquire_counter: each block adds to one counter with release
//   semantics and spins with acquire loads until every block has;
// - flag: each block publishes a flag (release) and waits for one other
//   block's (acquire): one producer a consumer;
// - tagged_one / tagged_all: the flag in the data (NCCL's LL protocol), a
//   value and its step number in one 8-byte store, polled with relaxed
//   loads and no fence; one producer a consumer, or every block reading
//   every block's word (a product's rows read the whole vector before).
// Every step reads a word another block wrote in the step before and writes
// its own, so each edge carries one real dependency. The ceiling the edges
// are compared to, measured in the same run: one L2 round trip (a dependent
// chain of loads through L2). Prints JSON: microseconds an edge, a grid of
// 8 blocks (a small kernel's), 32 (attention's at batch 1) and one an SM.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "bench/cuda_bench_common.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_dependent_launch.cuh"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/device_buffer.h"

namespace strata {
namespace {

using bench::add_release;
using bench::load_acquire;

constexpr int kThreads = 512;
constexpr int kSteps = 256;       // edges a timed run (persistent: the difference of 512 and 256)
constexpr int kMaxBlocks = 1024;  // words a step's buffer

__device__ __forceinline__ void store_release(uint32_t* at, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(at), "r"(v) : "memory");
}
__device__ __forceinline__ uint64_t load_relaxed(const uint64_t* at) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];\n" : "=l"(v) : "l"(at) : "memory");
  return v;
}
__device__ __forceinline__ void store_relaxed(uint64_t* at, uint64_t v) {
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;\n" ::"l"(at), "l"(v) : "memory");
}

// One step: block b reads what block b + 1 wrote in the step before
// (ping-pong buffers) and writes its own word; the block's threads wait for
// thread 0's read, as a product's threads wait for their input.
__device__ void step(uint32_t* words, int s) {
  __shared__ uint32_t seen;
  const uint32_t b = blockIdx.x, n = gridDim.x;
  const uint32_t* in = words + (s % 2) * kMaxBlocks;
  uint32_t* out = words + ((s + 1) % 2) * kMaxBlocks;
  if (threadIdx.x == 0) seen = __ldcg(in + (b + 1) % n);
  __syncthreads();
  if (threadIdx.x == 0) out[b] = seen + s;
}

__global__ void step_kernel(uint32_t* words, int s) { step(words, s); }

__global__ void dependent_step_kernel(uint32_t* words, int s) {
  let_next_kernel_start();
  wait_for_prior_kernels();
  step(words, s);
}

enum class Wait { kGridBarrier, kCounter, kFlag };

// sync: [0] the count, [1] the generation, then a flag a block, 128 bytes apart.
__global__ void persistent_kernel(uint32_t* words, uint32_t* sync, Wait wait, int steps) {
  const uint32_t b = blockIdx.x, n = gridDim.x;
  uint32_t* count = sync;
  uint32_t* generation = sync + 1;
  uint32_t* flags = sync + 32;
  for (int s = 0; s < steps; ++s) {
    step(words, s);
    __syncthreads();
    if (threadIdx.x == 0) {
      if (wait == Wait::kGridBarrier) {
        const uint32_t gen = load_acquire(generation);
        __threadfence();
        if (atomicAdd(count, 1) == n - 1) {
          *count = 0;
          __threadfence();
          atomicAdd(generation, 1);
        } else {
          while (load_acquire(generation) == gen) {
          }
        }
        __threadfence();
      } else if (wait == Wait::kCounter) {
        add_release(count, 1);
        while (load_acquire(count) < n * (s + 1)) {
        }
      } else {
        store_release(flags + 32 * b, s + 1);
        while (load_acquire(flags + 32 * ((b + 1) % n)) < static_cast<uint32_t>(s + 1)) {
        }
      }
    }
    __syncthreads();
  }
}

// Step s writes its words tagged s + 1 and waits for the words of step s - 1
// (tagged s; the buffer starts all ones: tag -1). A one-to-one producer may
// run two steps ahead and overwrite a word with a later tag, which counts.
__global__ void tagged_kernel(uint64_t* words, int steps, bool all) {
  const uint32_t b = blockIdx.x, n = gridDim.x;
  __shared__ uint32_t seen;
  for (int s = 0; s < steps; ++s) {
    const uint64_t* in = words + (s % 2) * kMaxBlocks;
    uint64_t* out = words + ((s + 1) % 2) * kMaxBlocks;
    if (threadIdx.x == 0) seen = 0;
    __syncthreads();
    const uint32_t from = all ? threadIdx.x : (threadIdx.x == 0 ? (b + 1) % n : n);
    if (s > 0 && from < n) {
      uint64_t w = load_relaxed(in + from);
      while (static_cast<int32_t>(static_cast<uint32_t>(w >> 32) - static_cast<uint32_t>(s)) < 0) {
        w = load_relaxed(in + from);
      }
      atomicAdd(&seen, static_cast<uint32_t>(w));
    }
    __syncthreads();
    if (threadIdx.x == 0) store_relaxed(out + b, uint64_t(s + 1) << 32 | (seen + s));
  }
}

// One thread follows a random cycle of indices, a word a 128-byte line,
// through 32 MB (inside L2, far outside L1): each hop one L2 round trip.
__global__ void l2_chase_kernel(const uint32_t* next, int hops, uint32_t* sink) {
  uint32_t at = 0;
  for (int i = 0; i < hops; ++i) at = __ldcg(next + at);
  *sink = at;
}

// kSteps launches of one step each, captured in a graph as a decode step's
// kernels are: microseconds an edge.
double kernel_chain_us(uint32_t* words, int blocks, bool dependent, cudaStream_t stream) {
  cudaGraph_t graph;
  STRATA_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int s = 0; s < kSteps; ++s) {
    if (dependent) {
      launch_dependent(dependent_step_kernel, dim3(blocks), dim3(kThreads), 0, stream, words, s);
    } else {
      step_kernel<<<blocks, kThreads, 0, stream>>>(words, s);
      STRATA_CUDA_CHECK_LAUNCH();
    }
  }
  STRATA_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  STRATA_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const double us =
      bench::median_us(stream, 21, [&] { STRATA_CUDA_CHECK(cudaGraphLaunch(exec, stream)); });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return us / kSteps;
}

// A persistent launch of 2 kSteps steps less one of kSteps, over kSteps:
// the launch and the reset cancel.
template <typename Launch>
double persistent_edge_us(cudaStream_t stream, Launch launch) {
  const auto run = [&](int steps) { return bench::median_us(stream, 21, [&] { launch(steps); }); };
  return (run(2 * kSteps) - run(kSteps)) / kSteps;
}

double l2_round_trip_us(cudaStream_t stream) {
  constexpr int kWords = 8 << 20;
  constexpr int kWordsALine = 32;
  std::vector<uint32_t> lines(kWords / kWordsALine);
  std::iota(lines.begin(), lines.end(), 0u);
  std::shuffle(lines.begin(), lines.end(), std::mt19937(7));
  std::vector<uint32_t> next(kWords);
  for (size_t i = 0; i < lines.size(); ++i) {
    next[lines[i] * kWordsALine] = lines[(i + 1) % lines.size()] * kWordsALine;
  }
  DeviceBuffer d_next(next.size() * sizeof(uint32_t)), sink(sizeof(uint32_t));
  STRATA_CUDA_CHECK(cudaMemcpy(d_next.data(), next.data(), d_next.bytes(), cudaMemcpyHostToDevice));
  constexpr int kHops = 20000;
  const auto run = [&](int hops) {
    return bench::median_us(stream, 21, [&] {
      l2_chase_kernel<<<1, 1, 0, stream>>>(d_next.as<uint32_t>(), hops, sink.as<uint32_t>());
      STRATA_CUDA_CHECK_LAUNCH();
    });
  };
  return (run(2 * kHops) - run(kHops)) / kHops;
}

void print_edges(int blocks, cudaStream_t stream) {
  DeviceBuffer words(2 * kMaxBlocks * sizeof(uint64_t)), sync(64 * 1024);
  STRATA_CUDA_CHECK(cudaMemset(words.data(), 0, words.bytes()));
  const auto persistent = [&](Wait wait) {
    return persistent_edge_us(stream, [&](int steps) {
      STRATA_CUDA_CHECK(cudaMemsetAsync(sync.data(), 0, sync.bytes(), stream));
      persistent_kernel<<<blocks, kThreads, 0, stream>>>(words.as<uint32_t>(), sync.as<uint32_t>(),
                                                         wait, steps);
      STRATA_CUDA_CHECK_LAUNCH();
    });
  };
  const auto tagged = [&](bool all) {
    return persistent_edge_us(stream, [&](int steps) {
      STRATA_CUDA_CHECK(cudaMemsetAsync(sync.data(), 0xff, sync.bytes(), stream));
      tagged_kernel<<<blocks, kThreads, 0, stream>>>(sync.as<uint64_t>(), steps, all);
      STRATA_CUDA_CHECK_LAUNCH();
    });
  };
  std::printf(
      "    {\"blocks\": %d, \"kernel_boundary\": %.3f, \"dependent_launch\": %.3f, "
      "\"grid_barrier\": %.3f, \"release_acquire_counter\": %.3f, \"flag\": %.3f, "
      "\"tagged_one\": %.3f, \"tagged_all\": %.3f}",
      blocks, kernel_chain_us(words.as<uint32_t>(), blocks, false, stream),
      kernel_chain_us(words.as<uint32_t>(), blocks, true, stream), persistent(Wait::kGridBarrier),
      persistent(Wait::kCounter), persistent(Wait::kFlag), tagged(false), tagged(true));
}

int run() {
  int n_devices = 0;
  if (cudaGetDeviceCount(&n_devices) != cudaSuccess || n_devices == 0) {
    std::fprintf(stderr, "cuda_sync_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  STRATA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t stream;
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int sms = cuda_multiprocessor_count();
  std::printf("{\"bench\": \"cuda_sync\", \"device\": \"%s\", \"sms\": %d,\n", prop.name, sms);
  std::printf("  \"ceiling\": {\"l2_round_trip_us\": %.3f},\n", l2_round_trip_us(stream));
  std::printf("  \"us_an_edge\": [\n");
  const int grids[] = {8, 32, std::min(sms, kThreads)};  // tagged_all: a thread a block
  for (int i = 0; i < 3; ++i) {
    print_edges(grids[i], stream);
    std::printf(i < 2 ? ",\n" : "\n");
  }
  std::printf("  ]\n}\n");
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace
}  // namespace strata

int main() { return strata::run(); }
