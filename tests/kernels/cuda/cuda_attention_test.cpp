// cuda_write_kv and cuda_attention against the CPU reference: the same
// random blocks (shuffled, non-contiguous block tables, spare slots no
// sequence owns), the new rows' K/V written on the host as the CPU backend
// writes them, then attention_paged per (sequence, query head). Covers
// decode batches, prefill chunks (fresh and continuing a cached prefix),
// mixed batches, GQA groups, head dims, block sizes and both KV dtypes.
// Each test skips without a CUDA device.
#include "kernels/cuda/cuda_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/cuda_check.h"
#include "kernels/cpu/attention.h"
#include "kernels/cuda/cuda_decode_attention.h"
#include "kernels/cuda/cuda_kv_arena.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/fp16.h"
#include "kernels/kv_layout.h"
#include "tests/kernels/cuda/cuda_test_support.h"

namespace strata {
namespace {

using testing::cuda_available;
using testing::poisoned_floats;
using testing::random_floats;
using testing::relative_error;
using testing::to_device;
using testing::to_host;

// Per query row, over all its heads: ||cuda - cpu|| / ||cpu||. Both sides
// read the same stored K/V values (the f16 rounding is done once, the same
// way), so only f32 rounding separates them: the CPU's own sums over up to
// 8k keys, summation order, __expf against std::exp. An exact emulation of
// both kernels measured at most 2.3e-6 on these cases.
// f32 kernel (f32 K/V, or head dims other than 64/128): f32 throughout.
constexpr double kF32Tolerance = 2e-5;
// Tensor-core kernel (f16 K/V, head_dim 64 or 128): q * scale and the
// probabilities enter the mma as hi + lo f16 pairs (~2^-22 relative each);
// the tensor cores accumulate in f32 but truncate, ~1e-5 at most over the
// <= ~1000-key runs one block accumulates here. Dropping the lo half of q
// or of p (plain f16 operands) gives up to 3.4e-4 or 2.1e-4 on these cases,
// which this must catch.
constexpr double kTensorCoreTolerance = 5e-5;

// 2 layers, checked in layer 1: a write or read in the wrong layer lands in
// other bytes of the slot (or of the next slot).
constexpr int64_t kLayers = 2;
constexpr int64_t kLayer = 1;
constexpr int64_t kSpareSlots = 5;  // slots that no sequence owns: must stay untouched

struct Seq {
  int64_t n_past = 0;  // cached tokens before this step
  int64_t n_rows = 0;  // new tokens this step
};

struct Shape {
  int64_t n_kv_heads = 2;
  int64_t group = 4;  // query heads per kv head
  int64_t head_dim = 128;
  int64_t block_tokens = 16;
  WeightType dtype = WeightType::kF16;

  int64_t n_heads() const { return n_kv_heads * group; }
  bool tensor_cores() const {
    return dtype == WeightType::kF16 && (head_dim == 64 || head_dim == 128);
  }
};

KvLayout layout_for(const Shape& shape) {
  return {.n_layers = kLayers,
          .n_kv_heads = shape.n_kv_heads,
          .head_dim = shape.head_dim,
          .block_tokens = shape.block_tokens,
          .dtype = shape.dtype};
}

std::string describe(const Shape& shape, const std::vector<Seq>& seqs) {
  std::ostringstream s;
  s << (shape.dtype == WeightType::kF16 ? "f16" : "f32") << " head_dim " << shape.head_dim
    << " kv_heads " << shape.n_kv_heads << " group " << shape.group << " block_tokens "
    << shape.block_tokens << "; sequences (n_past+rows):";
  for (const Seq& seq : seqs) s << " " << seq.n_past << "+" << seq.n_rows;
  return s.str();
}

// The step's batch as the engine flattens it (CudaAttentionBatch, on the host).
struct HostBatch {
  std::vector<int32_t> block_ids;
  std::vector<int32_t> seq_block_start;  // [n_seqs + 1]
  std::vector<int32_t> seq_first_row;    // [n_seqs + 1]
  std::vector<int32_t> seq_n_past;
  std::vector<int32_t> row_seq;
  int64_t n_slots = 0;
  int64_t max_seq_rows = 0;
  int64_t max_seq_keys = 0;

  int64_t n_seqs() const { return static_cast<int64_t>(seq_n_past.size()); }
  int64_t n_rows() const { return static_cast<int64_t>(row_seq.size()); }
};

HostBatch make_batch(const std::vector<Seq>& seqs, const KvLayout& layout, std::mt19937& rng) {
  HostBatch b;
  int64_t n_blocks = 0;
  for (const Seq& seq : seqs) n_blocks += layout.blocks_for(seq.n_past + seq.n_rows);
  b.n_slots = n_blocks + kSpareSlots;
  std::vector<int32_t> slots(static_cast<size_t>(b.n_slots));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  b.seq_block_start.push_back(0);
  b.seq_first_row.push_back(0);
  for (size_t s = 0; s < seqs.size(); ++s) {
    const int64_t n_keys = seqs[s].n_past + seqs[s].n_rows;
    for (int64_t i = 0; i < layout.blocks_for(n_keys); ++i) {
      b.block_ids.push_back(slots[b.block_ids.size()]);
    }
    b.seq_block_start.push_back(static_cast<int32_t>(b.block_ids.size()));
    b.seq_n_past.push_back(static_cast<int32_t>(seqs[s].n_past));
    b.row_seq.insert(b.row_seq.end(), static_cast<size_t>(seqs[s].n_rows), static_cast<int32_t>(s));
    b.seq_first_row.push_back(static_cast<int32_t>(b.row_seq.size()));
    b.max_seq_rows = std::max(b.max_seq_rows, seqs[s].n_rows);
    b.max_seq_keys = std::max(b.max_seq_keys, n_keys);
  }
  return b;
}

void store_element(std::byte* dst, float x, WeightType dtype) {
  if (dtype == WeightType::kF32) {
    std::memcpy(dst, &x, sizeof(x));
  } else {
    const uint16_t h = fp32_to_fp16(x);
    std::memcpy(dst, &h, sizeof(h));
  }
}

// Every slot filled with random values: the cached prefixes, and garbage
// where nothing should be read.
std::vector<std::byte> random_arena(const KvLayout& layout, int64_t n_slots, std::mt19937& rng) {
  const int64_t n = n_slots * layout.block_bytes() / layout.elem_bytes();
  const std::vector<float> values = random_floats(static_cast<size_t>(n), rng);
  std::vector<std::byte> arena(static_cast<size_t>(n_slots * layout.block_bytes()));
  for (int64_t i = 0; i < n; ++i) {
    store_element(arena.data() + i * layout.elem_bytes(), values[static_cast<size_t>(i)],
                  layout.dtype);
  }
  return arena;
}

// What the CPU backend's finish_qkv_row does for each row: K and V of every
// kv head into the row's slot of its sequence's block.
void write_kv_on_host(const KvLayout& layout, const HostBatch& b, const std::vector<float>& k,
                      const std::vector<float>& v, std::vector<std::byte>& arena) {
  const int64_t kv_dim = layout.n_kv_heads * layout.head_dim;
  for (int64_t row = 0; row < b.n_rows(); ++row) {
    const auto s = static_cast<size_t>(b.row_seq[static_cast<size_t>(row)]);
    const int64_t pos = b.seq_n_past[s] + row - b.seq_first_row[s];
    const int64_t block =
        b.block_ids[static_cast<size_t>(b.seq_block_start[s] + pos / layout.block_tokens)];
    std::byte* slot = arena.data() + block * layout.block_bytes();
    for (int64_t h = 0; h < layout.n_kv_heads; ++h) {
      for (int64_t c = 0; c < layout.head_dim; ++c) {
        const auto i = static_cast<size_t>(row * kv_dim + h * layout.head_dim + c);
        const int64_t at = c * layout.elem_bytes();
        const int64_t token = pos % layout.block_tokens;
        store_element(slot + layout.offset(kLayer, KvPart::kKey, h, token) + at, k[i],
                      layout.dtype);
        store_element(slot + layout.offset(kLayer, KvPart::kValue, h, token) + at, v[i],
                      layout.dtype);
      }
    }
  }
}

std::vector<float> attention_on_host(const KvLayout& layout, const HostBatch& b,
                                     const std::vector<std::byte>& arena,
                                     const std::vector<float>& q, int64_t n_heads, float scale) {
  const int64_t d = layout.head_dim;
  const int64_t q_dim = n_heads * d;
  const int64_t group = n_heads / layout.n_kv_heads;
  std::vector<float> out(static_cast<size_t>(b.n_rows() * q_dim));
  std::vector<float> scratch;
  for (size_t s = 0; s < static_cast<size_t>(b.n_seqs()); ++s) {
    std::vector<const std::byte*> blocks;
    for (int32_t i = b.seq_block_start[s]; i < b.seq_block_start[s + 1]; ++i) {
      blocks.push_back(arena.data() + b.block_ids[static_cast<size_t>(i)] * layout.block_bytes());
    }
    const int64_t first_row = b.seq_first_row[s];
    const int64_t n_rows = b.seq_first_row[s + 1] - first_row;
    for (int64_t head = 0; head < n_heads; ++head) {
      const PagedKvHead kv{
          .blocks = blocks,
          .key_offset_bytes = layout.offset(kLayer, KvPart::kKey, head / group),
          .value_offset_bytes = layout.offset(kLayer, KvPart::kValue, head / group),
          .block_tokens = layout.block_tokens,
          .head_dim = d,
          .dtype = layout.dtype};
      const AttentionQueries queries{.q = q.data() + first_row * q_dim + head * d,
                                     .q_stride = q_dim,
                                     .out = out.data() + first_row * q_dim + head * d,
                                     .out_stride = q_dim,
                                     .n_tokens = n_rows,
                                     .first_position = b.seq_n_past[s]};
      scratch.resize(static_cast<size_t>(attention_scratch_floats(kv, b.seq_n_past[s] + n_rows)));
      attention_paged(kv, queries, scale, scratch);
    }
  }
  return out;
}

struct DeviceResult {
  std::vector<float> out;        // [n_rows][n_heads * head_dim]
  std::vector<std::byte> arena;  // after cuda_write_kv
};

// Sequence s of `b` as a batch of its own: the same blocks, its own rows only.
HostBatch sequence_alone(const HostBatch& b, size_t s) {
  HostBatch one;
  one.block_ids.assign(b.block_ids.begin() + b.seq_block_start[s],
                       b.block_ids.begin() + b.seq_block_start[s + 1]);
  one.seq_block_start = {0, static_cast<int32_t>(one.block_ids.size())};
  const int32_t n_rows = b.seq_first_row[s + 1] - b.seq_first_row[s];
  one.seq_first_row = {0, n_rows};
  one.seq_n_past = {b.seq_n_past[s]};
  one.row_seq.assign(static_cast<size_t>(n_rows), 0);
  one.n_slots = b.n_slots;
  one.max_seq_rows = n_rows;
  one.max_seq_keys = b.seq_n_past[s] + n_rows;
  return one;
}

// The device copy of the host arena: unpadded slots, as the host's.
CudaKvArena device_arena(const KvLayout& layout, DeviceBuffer& arena) {
  return cuda_kv_arena(layout, arena.as<std::byte>(), layout.block_bytes());
}

// A HostBatch's arrays on the device, and the CudaAttentionBatch over them.
struct DeviceBatch {
  explicit DeviceBatch(const HostBatch& b)
      : block_ids(to_device(b.block_ids)),
        seq_block_start(to_device(b.seq_block_start)),
        seq_first_row(to_device(b.seq_first_row)),
        seq_n_past(to_device(b.seq_n_past)),
        row_seq(to_device(b.row_seq)),
        view{.block_ids = block_ids.as<int32_t>(),
             .seq_block_start = seq_block_start.as<int32_t>(),
             .seq_first_row = seq_first_row.as<int32_t>(),
             .seq_n_past = seq_n_past.as<int32_t>(),
             .row_seq = row_seq.as<int32_t>(),
             .n_seqs = b.n_seqs(),
             .n_rows = b.n_rows(),
             .max_seq_rows = b.max_seq_rows,
             .max_seq_keys = b.max_seq_keys} {}

  DeviceBuffer block_ids, seq_block_start, seq_first_row, seq_n_past, row_seq;
  CudaAttentionBatch view;
};

// The tile kernels' workspace and the decode kernel's scratch, NaNs where
// partial results go: the combines must read only parts that were written.
struct Scratch {
  Scratch();
  // Room in `decode` for b's sequences; its partials poisoned when it grows.
  void reserve_for(const HostBatch& b, const KvLayout& layout, int64_t n_heads);

  DeviceBuffer workspace;
  CudaDecodeScratch decode;
};

DeviceResult attention_on_device(const KvLayout& layout, const HostBatch& b,
                                 const std::vector<std::byte>& arena, const std::vector<float>& q,
                                 const std::vector<float>& k, const std::vector<float>& v,
                                 int64_t n_heads, float scale, Scratch& scratch) {
  DeviceBuffer d_arena = to_device(std::span<const std::byte>(arena));
  const DeviceBatch batch(b);
  DeviceBuffer d_q = to_device(q);
  DeviceBuffer d_k = to_device(k);
  DeviceBuffer d_v = to_device(v);
  const CudaKvArena kv = device_arena(layout, d_arena);
  cuda_write_kv(kv, batch.view, kLayer, d_k.as<float>(), d_v.as<float>(), nullptr);
  const auto n_out = static_cast<size_t>(b.n_rows() * n_heads * layout.head_dim);
  DeviceBuffer out = poisoned_floats(n_out);
  scratch.reserve_for(b, layout, n_heads);
  cuda_attention(kv, batch.view, kLayer, n_heads, scale, d_q.as<float>(), out.as<float>(),
                 scratch.workspace, scratch.decode, nullptr);
  return {.out = to_host<float>(out, n_out), .arena = to_host<std::byte>(d_arena, arena.size())};
}

// The worst row's relative error, and which row it is.
void expect_rows_close(const std::vector<float>& out, const std::vector<float>& expected,
                       const HostBatch& b, int64_t q_dim, double tolerance) {
  double worst = 0.0;
  int64_t worst_row = 0;
  for (int64_t row = 0; row < b.n_rows(); ++row) {
    const auto at = static_cast<size_t>(row * q_dim);
    const double error =
        relative_error(std::span(out).subspan(at, static_cast<size_t>(q_dim)),
                       std::span(expected).subspan(at, static_cast<size_t>(q_dim)));
    if (!(error <= worst)) {  // NaN or inf count as worst
      worst = error;
      worst_row = row;
    }
  }
  const auto s = static_cast<size_t>(b.row_seq[static_cast<size_t>(worst_row)]);
  EXPECT_LT(worst, tolerance) << "worst: row " << worst_row << " of sequence " << s
                              << " at position "
                              << b.seq_n_past[s] + worst_row - b.seq_first_row[s];
}

void expect_same_bytes(const std::vector<std::byte>& arena, const std::vector<std::byte>& expected,
                       const KvLayout& layout) {
  ASSERT_EQ(arena.size(), expected.size());
  const auto mismatch = std::mismatch(arena.begin(), arena.end(), expected.begin());
  if (mismatch.first == arena.end()) return;
  const int64_t at = mismatch.first - arena.begin();
  const int64_t n_differ = static_cast<int64_t>(arena.size()) -
                           std::inner_product(arena.begin(), arena.end(), expected.begin(),
                                              int64_t{0}, std::plus<>(), std::equal_to<>());
  ADD_FAILURE() << n_differ << " KV bytes differ from the host's write; first in slot "
                << at / layout.block_bytes() << " at byte " << at % layout.block_bytes()
                << " (layer bytes " << layout.layer_bytes() << ")";
}

// One step: random cache, random q/k/v, K/V writes and attention on both sides.
void check_step(const Shape& shape, const std::vector<Seq>& seqs, uint32_t seed,
                Scratch& scratch) {
  SCOPED_TRACE(describe(shape, seqs));
  std::mt19937 rng(seed);
  const KvLayout layout = layout_for(shape);
  const HostBatch b = make_batch(seqs, layout, rng);
  std::vector<std::byte> arena = random_arena(layout, b.n_slots, rng);
  const int64_t q_dim = shape.n_heads() * shape.head_dim;
  const int64_t kv_dim = shape.n_kv_heads * shape.head_dim;
  const auto q = random_floats(static_cast<size_t>(b.n_rows() * q_dim), rng);
  const auto k = random_floats(static_cast<size_t>(b.n_rows() * kv_dim), rng);
  const auto v = random_floats(static_cast<size_t>(b.n_rows() * kv_dim), rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));

  const DeviceResult result =
      attention_on_device(layout, b, arena, q, k, v, shape.n_heads(), scale, scratch);
  write_kv_on_host(layout, b, k, v, arena);
  expect_same_bytes(result.arena, arena, layout);
  const std::vector<float> expected =
      attention_on_host(layout, b, arena, q, shape.n_heads(), scale);
  expect_rows_close(result.out, expected, b, q_dim,
                    shape.tensor_cores() ? kTensorCoreTolerance : kF32Tolerance);
}

// A tile workspace of NaNs, large enough for every step here.
Scratch::Scratch() : workspace(poisoned_floats(size_t{8} << 20)) {}

void Scratch::reserve_for(const HostBatch& b, const KvLayout& layout, int64_t n_heads) {
  if (decode.reserve(b.n_seqs(), n_heads, layout.n_kv_heads, layout.head_dim, nullptr)) {
    STRATA_CUDA_CHECK(cudaMemset(decode.partials(), 0xff, decode.partials_bytes()));
  }
}

void check_step(const Shape& shape, const std::vector<Seq>& seqs, uint32_t seed) {
  Scratch scratch;
  check_step(shape, seqs, seed, scratch);
}

std::vector<Seq> decode_batch(std::initializer_list<int64_t> contexts) {
  std::vector<Seq> seqs;
  for (int64_t context : contexts) seqs.push_back({.n_past = context - 1, .n_rows = 1});
  return seqs;
}

// Head dims 64/128 with f16 run the tensor-core kernel; the others the f32 one.
const Shape kShapes[] = {
    {.n_kv_heads = 2, .group = 4, .head_dim = 128, .block_tokens = 16},
    {.n_kv_heads = 3, .group = 1, .head_dim = 64, .block_tokens = 32},
    {.n_kv_heads = 1, .group = 8, .head_dim = 128, .block_tokens = 16},
    {.n_kv_heads = 2, .group = 2, .head_dim = 128, .block_tokens = 32, .dtype = WeightType::kF32},
    {.n_kv_heads = 2, .group = 8, .head_dim = 64, .block_tokens = 16, .dtype = WeightType::kF32},
    {.n_kv_heads = 2, .group = 4, .head_dim = 96, .block_tokens = 16},
};

TEST(CudaAttentionTest, DecodeOneSequenceOfEachContext) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  uint32_t seed = 1;
  for (const Shape& shape : kShapes) {
    for (int64_t context : {1, 15, 16, 17, 1000, 8200}) {
      check_step(shape, decode_batch({context}), seed++);
    }
  }
}

TEST(CudaAttentionTest, DecodeBatchesOfMixedContexts) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  uint32_t seed = 100;
  for (const Shape& shape : kShapes) {
    check_step(shape, decode_batch({15, 1000, 16}), seed++);
    check_step(
        shape,
        decode_batch({1, 15, 16, 17, 1000, 8200, 2, 31, 32, 33, 100, 200, 300, 400, 500, 600, 700}),
        seed++);
  }
}

// The decode kernel cuts a sequence's keys into splits of
// kDecodeAttentionSplitKeys: contexts on either side of split boundaries, up
// to the most splits, alone and in one batch.
TEST(CudaAttentionTest, DecodeAcrossKeySplitBoundaries) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const int64_t split = kDecodeAttentionSplitKeys;
  uint32_t seed = 150;
  for (const Shape& shape : kShapes) {
    for (int64_t context : {split - 1, split, split + 1, 2 * split + 1, 8 * split,
                            kDecodeAttentionMaxKeys - 1, kDecodeAttentionMaxKeys}) {
      check_step(shape, decode_batch({context}), seed++);
    }
    check_step(shape, decode_batch({split + 1, 3, kDecodeAttentionMaxKeys, split, 8 * split + 1}),
               seed++);
  }
}

// Heads wider than 128 (up to kDecodeAttentionMaxHeadDim): each thread of
// the decode kernel holds twice the chunks of K and V (its second
// instantiation), f16 and f32, across split boundaries.
TEST(CudaAttentionTest, DecodeHeadsWiderThan128) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const int64_t split = kDecodeAttentionSplitKeys;
  const Shape wide[] = {
      {.n_kv_heads = 2, .group = 2, .head_dim = 256, .block_tokens = 16},
      {.n_kv_heads = 1, .group = 4, .head_dim = 160, .block_tokens = 16, .dtype = WeightType::kF32},
  };
  uint32_t seed = 160;
  for (const Shape& shape : wide) {
    for (int64_t context : {int64_t{1}, split + 1, kDecodeAttentionMaxKeys}) {
      check_step(shape, decode_batch({context}), seed++);
    }
    check_step(shape, decode_batch({split, 3, kDecodeAttentionMaxKeys, 2 * split + 1}), seed++);
  }
}

// The splits' counters are back at zero after every launch: the same
// scratch serves one step after another (as a replayed graph does), each
// result right.
TEST(CudaAttentionTest, DecodeScratchServesSuccessiveSteps) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  Scratch scratch;
  uint32_t seed = 170;
  for (int step = 0; step < 3; ++step) {
    check_step(kShapes[0], decode_batch({700, 65, 1024, 2}), seed++, scratch);
    check_step(kShapes[2], decode_batch({130}), seed++, scratch);
  }
}

TEST(CudaAttentionTest, PrefillFreshAndContinuingACachedPrefix) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  uint32_t seed = 200;
  for (int64_t n_rows : {1, 5, 64, 300, 1100}) {
    for (int64_t n_past : {0, 37, 512}) {
      check_step(kShapes[0], {{.n_past = n_past, .n_rows = n_rows}}, seed++);
    }
  }
}

TEST(CudaAttentionTest, PrefillAcrossShapes) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  uint32_t seed = 300;
  for (const Shape& shape : kShapes) {
    for (int64_t n_rows : {5, 64, 300}) {
      for (int64_t n_past : {0, 37}) {
        check_step(shape, {{.n_past = n_past, .n_rows = n_rows}}, seed++);
      }
    }
  }
}

TEST(CudaAttentionTest, MixedDecodeAndPrefillInOneBatch) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::vector<Seq> seqs = {{.n_past = 0, .n_rows = 300},  {.n_past = 99, .n_rows = 1},
                                 {.n_past = 4000, .n_rows = 1}, {.n_past = 512, .n_rows = 64},
                                 {.n_past = 14, .n_rows = 1},   {.n_past = 15, .n_rows = 1},
                                 {.n_past = 37, .n_rows = 5}};
  uint32_t seed = 400;
  for (const Shape& shape : kShapes) check_step(shape, seqs, seed++);
  // One token per block, odd GQA groups and head dims.
  const Shape odd[] = {
      {.n_kv_heads = 2, .group = 2, .head_dim = 64, .block_tokens = 1},
      {.n_kv_heads = 2, .group = 3, .head_dim = 128, .block_tokens = 1},
      {.n_kv_heads = 1, .group = 7, .head_dim = 80, .block_tokens = 1, .dtype = WeightType::kF32},
      {.n_kv_heads = 2, .group = 5, .head_dim = 32, .block_tokens = 48},
      {.n_kv_heads = 1, .group = 16, .head_dim = 256, .block_tokens = 16},
  };
  for (const Shape& shape : odd) check_step(shape, seqs, seed++);
}

// Few work items (one kv head) over long keys: the keys of prefill tiles are
// split into parts, whose rows see different numbers of parts; the combine
// of the parts leaves the short decode's row to the decode kernel.
TEST(CudaAttentionTest, SplitKeysOfALongPrefill) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::vector<Seq> seqs = {
      {.n_past = 8000, .n_rows = 300}, {.n_past = 5000, .n_rows = 1}, {.n_past = 50, .n_rows = 1}};
  check_step({.n_kv_heads = 1, .group = 4, .head_dim = 128}, seqs, 500);
  check_step({.n_kv_heads = 1, .group = 2, .head_dim = 64, .dtype = WeightType::kF32}, seqs, 501);
}

// The workspace grows for a bigger step and is reused as is for a smaller one.
TEST(CudaAttentionTest, WorkspaceServesSuccessiveSteps) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  Scratch scratch;
  scratch.workspace = DeviceBuffer();  // empty: the first step grows it
  check_step(kShapes[0], decode_batch({8200, 3000}), 600, scratch);
  const size_t grown = scratch.workspace.bytes();
  EXPECT_GT(grown, 0u);
  check_step(kShapes[0], decode_batch({2000}), 601, scratch);
  EXPECT_EQ(scratch.workspace.bytes(), grown);
}

// Which sequences the decode kernel takes (one row, at most
// kDecodeAttentionMaxKeys keys), and which models it fits: the decode tests
// above run it at contexts 1-1,000 and the tile kernels at 8,200; GQA groups
// over 8, head dims that are not whole 16-byte rows or over 256 keep to the
// tile kernels. (Host side: the arena is never read.)
TEST(CudaAttentionTest, DecodeKernelTakesShortDecodesOfTheModelsItFits) {
  EXPECT_TRUE(decode_attention_takes_sequence(1, 1));
  EXPECT_TRUE(decode_attention_takes_sequence(1, kDecodeAttentionMaxKeys));
  EXPECT_FALSE(decode_attention_takes_sequence(1, kDecodeAttentionMaxKeys + 1));
  EXPECT_FALSE(decode_attention_takes_sequence(2, 100));
  alignas(16) static std::byte base[16];
  const auto fits = [&](int64_t head_dim, WeightType dtype, int64_t n_heads) {
    const KvLayout layout{.n_layers = kLayers,
                          .n_kv_heads = 2,
                          .head_dim = head_dim,
                          .block_tokens = 16,
                          .dtype = dtype};
    return cuda_decode_attention_fits(cuda_kv_arena(layout, base, layout.block_bytes()), n_heads);
  };
  for (WeightType dtype : {WeightType::kF16, WeightType::kF32}) {
    for (int64_t head_dim : {64, 96, 128, 256}) {
      EXPECT_TRUE(fits(head_dim, dtype, 2));
      EXPECT_TRUE(fits(head_dim, dtype, 16));
      EXPECT_FALSE(fits(head_dim, dtype, 18));
      EXPECT_FALSE(fits(head_dim, dtype, 3));
    }
    EXPECT_FALSE(fits(36, dtype, 8));
    EXPECT_FALSE(fits(264, dtype, 8));
  }
}

// A short decode's result has the same bits alone as beside prefill chunks,
// long decodes and other short decodes: which kernel a sequence takes, and
// every sum in it, depends on the sequence alone (the engine's "alone =
// batched" rests on it).
TEST(CudaAttentionTest, ShortDecodesGiveTheSameBitsAloneAndBatched) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::vector<Seq> seqs = {{.n_past = 0, .n_rows = 300},
                                 {.n_past = 99, .n_rows = 1},
                                 {.n_past = 4000, .n_rows = 1},
                                 {.n_past = 1023, .n_rows = 1},
                                 {.n_past = 37, .n_rows = 5}};
  uint32_t seed = 700;
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(describe(shape, seqs));
    std::mt19937 rng(seed++);
    const KvLayout layout = layout_for(shape);
    const HostBatch b = make_batch(seqs, layout, rng);
    const std::vector<std::byte> arena = random_arena(layout, b.n_slots, rng);
    const int64_t q_dim = shape.n_heads() * shape.head_dim;
    const int64_t kv_dim = shape.n_kv_heads * shape.head_dim;
    const auto q = random_floats(static_cast<size_t>(b.n_rows() * q_dim), rng);
    const auto k = random_floats(static_cast<size_t>(b.n_rows() * kv_dim), rng);
    const auto v = random_floats(static_cast<size_t>(b.n_rows() * kv_dim), rng);
    const float scale = 0.125f;
    Scratch scratch;
    const DeviceResult batched =
        attention_on_device(layout, b, arena, q, k, v, shape.n_heads(), scale, scratch);
    for (size_t s : {size_t{1}, size_t{3}}) {
      const auto row = static_cast<size_t>(b.seq_first_row[s]);
      const auto rows_of = [&](const std::vector<float>& x, int64_t dim) {
        const auto begin = x.begin() + static_cast<std::ptrdiff_t>(row * static_cast<size_t>(dim));
        return std::vector<float>(begin, begin + dim);
      };
      const HostBatch one = sequence_alone(b, s);
      const DeviceResult alone = attention_on_device(layout, one, arena, rows_of(q, q_dim),
                                                     rows_of(k, kv_dim), rows_of(v, kv_dim),
                                                     shape.n_heads(), scale, scratch);
      EXPECT_EQ(std::memcmp(alone.out.data(), batched.out.data() + row * q_dim,
                            static_cast<size_t>(q_dim) * sizeof(float)),
                0)
          << "sequence " << s;
    }
  }
}

// Q/K/V finishing with kv_out stores K and V as it finishes them: the very
// bytes cuda_write_kv writes from the finished rows (the CUDA backend relies
// on it instead of a launch of its own), in every sequence's slots, nothing
// elsewhere; and its compact outputs are the same.
TEST(CudaAttentionTest, FinishQkvWritesWhatWriteKvWrites) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(700);
  const std::vector<Seq> seqs = {{.n_past = 37, .n_rows = 5}, {.n_past = 15, .n_rows = 1},
                                 {.n_past = 0, .n_rows = 20}};
  for (const Shape& shape : {kShapes[0], kShapes[3], kShapes[5]}) {
    SCOPED_TRACE(describe(shape, seqs));
    const KvLayout layout = layout_for(shape);
    const HostBatch b = make_batch(seqs, layout, rng);
    const DeviceBatch batch(b);
    const std::vector<std::byte> arena = random_arena(layout, b.n_slots, rng);
    const int64_t q_dim = shape.n_heads() * shape.head_dim;
    const int64_t kv_dim = shape.n_kv_heads * shape.head_dim;
    const int64_t width = q_dim + 2 * kv_dim;
    DeviceBuffer qkv = to_device(random_floats(static_cast<size_t>(b.n_rows() * width), rng));
    std::vector<int32_t> positions;
    for (int64_t s = 0; s < b.n_seqs(); ++s) {
      for (int32_t row = b.seq_first_row[s]; row < b.seq_first_row[s + 1]; ++row) {
        positions.push_back(b.seq_n_past[s] + row - b.seq_first_row[s]);
      }
    }
    std::vector<float> inv_freqs;
    for (int64_t i = 0; i < shape.head_dim / 2; ++i) {
      inv_freqs.push_back(std::pow(10000.0f, -2.0f * static_cast<float>(i) /
                                                 static_cast<float>(shape.head_dim)));
    }
    DeviceBuffer d_positions = to_device(positions), d_inv_freqs = to_device(inv_freqs);
    const QkvInput in{.q = qkv.as<float>(), .k = qkv.as<float>() + q_dim,
                      .v = qkv.as<float>() + q_dim + kv_dim, .q_stride = width,
                      .k_stride = width, .v_stride = width};
    // Each way: the arena after the step, and the compact K and V.
    auto finish = [&](bool fused) {
      DeviceBuffer d_arena = to_device(std::span<const std::byte>(arena));
      DeviceBuffer q = poisoned_floats(static_cast<size_t>(b.n_rows() * q_dim));
      DeviceBuffer k = poisoned_floats(static_cast<size_t>(b.n_rows() * kv_dim));
      DeviceBuffer v = poisoned_floats(static_cast<size_t>(b.n_rows() * kv_dim));
      const CudaKvArena kv = device_arena(layout, d_arena);
      QkvFinish f{.n_rows = b.n_rows(), .n_heads = shape.n_heads(),
                  .n_kv_heads = shape.n_kv_heads, .head_dim = shape.head_dim,
                  .positions = d_positions.as<int32_t>(), .inv_freqs = d_inv_freqs.as<float>(),
                  .style = RopeStyle::kNormal, .kv_out = {}};
      if (fused) f.kv_out = cuda_kv_slots(kv, batch.view, kLayer);
      cuda_finish_qkv(in, f, q.as<float>(), k.as<float>(), v.as<float>(), nullptr);
      if (!fused) cuda_write_kv(kv, batch.view, kLayer, k.as<float>(), v.as<float>(), nullptr);
      const auto n_kv = static_cast<size_t>(b.n_rows() * kv_dim);
      return std::tuple(to_host<std::byte>(d_arena, arena.size()), to_host<float>(k, n_kv),
                        to_host<float>(v, n_kv));
    };
    const auto [fused_arena, fused_k, fused_v] = finish(true);
    const auto [arena_after, k_after, v_after] = finish(false);
    expect_same_bytes(fused_arena, arena_after, layout);
    EXPECT_EQ(fused_k, k_after);
    EXPECT_EQ(fused_v, v_after);
  }
}

// Raw projections of a decode step as the fused [q | k | v] matrix, and
// everything that finishes them (biases, per-head norms, RoPE positions and
// frequencies) on the device.
struct RawQkv {
  RawQkv(const Shape& shape, const HostBatch& b, bool qwen_style, std::mt19937& rng)
      : q_dim(shape.n_heads() * shape.head_dim),
        kv_dim(shape.n_kv_heads * shape.head_dim),
        qkv(to_device(random_floats(static_cast<size_t>(b.n_rows() * (q_dim + 2 * kv_dim)), rng))),
        bq(to_device(random_floats(static_cast<size_t>(q_dim), rng))),
        bk(to_device(random_floats(static_cast<size_t>(kv_dim), rng))),
        bv(to_device(random_floats(static_cast<size_t>(kv_dim), rng))),
        q_norm(to_device(random_floats(static_cast<size_t>(shape.head_dim), rng))),
        k_norm(to_device(random_floats(static_cast<size_t>(shape.head_dim), rng))),
        positions(to_device(b.seq_n_past)),  // one row a sequence: its position is n_past
        inv_freqs(to_device(rope_frequencies(shape.head_dim))),
        qwen_style(qwen_style) {}

  static std::vector<float> rope_frequencies(int64_t head_dim) {
    std::vector<float> f;
    for (int64_t i = 0; i < head_dim / 2; ++i) {
      f.push_back(std::pow(10000.0f, -2.0f * static_cast<float>(i) / static_cast<float>(head_dim)));
    }
    return f;
  }

  // Biases (qwen2) and Q/K norms (qwen3) and NeoX rotation when qwen_style.
  QkvFinish finish(const Shape& shape, int64_t n_rows, const KvSlots& kv_out) const {
    const auto maybe = [&](const DeviceBuffer& b) { return qwen_style ? b.as<float>() : nullptr; };
    return {.n_rows = n_rows, .n_heads = shape.n_heads(), .n_kv_heads = shape.n_kv_heads,
            .head_dim = shape.head_dim, .bq = maybe(bq), .bk = maybe(bk), .bv = maybe(bv),
            .q_norm = maybe(q_norm), .k_norm = maybe(k_norm), .eps = 1e-6f,
            .positions = positions.as<int32_t>(), .inv_freqs = inv_freqs.as<float>(),
            .style = qwen_style ? RopeStyle::kNeox : RopeStyle::kNormal, .kv_out = kv_out};
  }
  QkvInput input() const {
    const int64_t width = q_dim + 2 * kv_dim;
    return {.q = qkv.as<float>(), .k = qkv.as<float>() + q_dim,
            .v = qkv.as<float>() + q_dim + kv_dim, .q_stride = width, .k_stride = width,
            .v_stride = width};
  }

  int64_t q_dim, kv_dim;
  DeviceBuffer qkv, bq, bk, bv, q_norm, k_norm, positions, inv_freqs;
  bool qwen_style;
};

// The decode kernel finishing Q/K/V itself gives the very bits of
// cuda_finish_qkv then cuda_attention: out, the arena (the new K/V in every
// sequence's slot, the first row of a block included, nothing elsewhere)
// and the compact q, k and v.
TEST(CudaAttentionTest, DecodeKernelFinishesQkvAsTheTwoLaunchesDo) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(900);
  const std::vector<Seq> seqs = decode_batch({1, 16, 17, 33, 250, 1024});
  bool qwen_style = false;
  for (const Shape& shape : kShapes) {
    qwen_style = !qwen_style;
    SCOPED_TRACE(describe(shape, seqs) + (qwen_style ? " (biases, Q/K norms, NeoX)" : ""));
    const KvLayout layout = layout_for(shape);
    const HostBatch b = make_batch(seqs, layout, rng);
    const DeviceBatch batch(b);
    const std::vector<std::byte> arena = random_arena(layout, b.n_slots, rng);
    const RawQkv raw(shape, b, qwen_style, rng);
    const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
    // Each way: out, the arena after the step, and the compact q, k and v.
    auto run = [&](bool in_attention) {
      DeviceBuffer d_arena = to_device(std::span<const std::byte>(arena));
      const CudaKvArena kv = device_arena(layout, d_arena);
      EXPECT_TRUE(cuda_attention_is_decode_only(kv, batch.view, shape.n_heads()));
      const auto n_q = static_cast<size_t>(b.n_rows() * raw.q_dim);
      const auto n_kv = static_cast<size_t>(b.n_rows() * raw.kv_dim);
      DeviceBuffer q = poisoned_floats(n_q), k = poisoned_floats(n_kv), v = poisoned_floats(n_kv);
      DeviceBuffer out = poisoned_floats(n_q);
      Scratch scratch;
      scratch.reserve_for(b, layout, shape.n_heads());
      const DecodeQkvFinish finish{
          .in = raw.input(),
          .finish = raw.finish(shape, b.n_rows(), cuda_kv_slots(kv, batch.view, kLayer)),
          .q = q.as<float>(), .k = k.as<float>(), .v = v.as<float>()};
      if (in_attention) {
        cuda_finish_qkv_and_decode_attention(kv, batch.view, kLayer, finish, scale,
                                             out.as<float>(), scratch.decode, nullptr);
      } else {
        cuda_finish_qkv(finish.in, finish.finish, finish.q, finish.k, finish.v, nullptr);
        cuda_attention(kv, batch.view, kLayer, shape.n_heads(), scale, finish.q, out.as<float>(),
                       scratch.workspace, scratch.decode, nullptr);
      }
      return std::tuple(to_host<float>(out, n_q), to_host<std::byte>(d_arena, arena.size()),
                        to_host<float>(q, n_q), to_host<float>(k, n_kv), to_host<float>(v, n_kv));
    };
    const auto [out, arena_after, q, k, v] = run(true);
    const auto [want_out, want_arena, want_q, want_k, want_v] = run(false);
    EXPECT_EQ(std::memcmp(out.data(), want_out.data(), out.size() * sizeof(float)), 0);
    expect_same_bytes(arena_after, want_arena, layout);
    EXPECT_EQ(q, want_q);
    EXPECT_EQ(k, want_k);
    EXPECT_EQ(v, want_v);
  }
}

// Steps the decode kernel does not take alone (a prefill row, a sequence
// past kDecodeAttentionMaxKeys), finishing that would write K/V into another
// layer, or a scratch without room for the batch, stop the process before
// anything is launched (a caller's bug, as every STRATA_CHECK). (Host side.)
TEST(CudaAttentionTest, DecodeKernelFinishesQkvOfDecodeOnlyStepsOnly) {
  alignas(16) static std::byte base[16];
  const Shape shape = kShapes[0];
  const KvLayout layout = layout_for(shape);
  const CudaKvArena kv = cuda_kv_arena(layout, base, layout.block_bytes());
  alignas(16) static int32_t table[8];
  const auto batch_of = [&](int64_t max_rows, int64_t max_keys) {
    return CudaAttentionBatch{.block_ids = table, .seq_block_start = table,
                              .seq_first_row = table, .seq_n_past = table, .row_seq = table,
                              .n_seqs = 2, .n_rows = 2 * max_rows, .max_seq_rows = max_rows,
                              .max_seq_keys = max_keys};
  };
  EXPECT_TRUE(cuda_attention_is_decode_only(kv, batch_of(1, kDecodeAttentionMaxKeys),
                                            shape.n_heads()));
  EXPECT_FALSE(cuda_attention_is_decode_only(kv, batch_of(2, 40), shape.n_heads()));
  EXPECT_FALSE(cuda_attention_is_decode_only(kv, batch_of(1, kDecodeAttentionMaxKeys + 1),
                                             shape.n_heads()));
  const auto finish_of = [&](const CudaAttentionBatch& batch, int64_t layer) {
    return DecodeQkvFinish{.in = {},
                           .finish = {.n_rows = batch.n_rows, .n_heads = shape.n_heads(),
                                      .n_kv_heads = shape.n_kv_heads, .head_dim = shape.head_dim,
                                      .kv_out = cuda_kv_slots(kv, batch, layer)}};
  };
  float out = 0.0f;
  CudaDecodeScratch scratch;  // never reserved
  for (const CudaAttentionBatch& batch :
       {batch_of(2, 40), batch_of(1, kDecodeAttentionMaxKeys + 1)}) {
    EXPECT_DEATH(cuda_finish_qkv_and_decode_attention(kv, batch, kLayer, finish_of(batch, kLayer),
                                                      1.0f, &out, scratch, nullptr),
                 "not the decode kernel's alone");
  }
  const CudaAttentionBatch decode = batch_of(1, 40);
  EXPECT_DEATH(cuda_finish_qkv_and_decode_attention(kv, decode, kLayer, finish_of(decode, 0), 1.0f,
                                                    &out, scratch, nullptr),
               "into its layer");
  EXPECT_DEATH(cuda_finish_qkv_and_decode_attention(kv, decode, kLayer,
                                                    finish_of(decode, kLayer), 1.0f, &out,
                                                    scratch, nullptr),
               "reserve it first");
}

}  // namespace
}  // namespace strata
