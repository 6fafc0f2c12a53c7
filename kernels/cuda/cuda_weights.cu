// CudaWeightMatrix::upload: repacks GGUF blocks on the host into the layout
// of cuda_weights_layout.cuh (quants and meta per row), then copies it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <span>
#include <vector>

#include "common/check.h"
#include "gpu/cuda_check.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cuda/cuda_weights.h"
#include "kernels/cuda/cuda_weights_layout.cuh"

namespace strata {
namespace {

using cuda_layout::repacked_block;
using cuda_layout::RepackedBlock;

// Host bytes repacked per copy: bounds the staging memory for large matrices.
constexpr int64_t kStagingBytes = int64_t{32} << 20;

void store_u16(std::byte* at, uint16_t value) { std::memcpy(at, &value, sizeof(value)); }

// One row of blocks into its quants and meta (cuda_weights_layout.cuh); the
// padding bytes are not written (the caller zeroes them).
void repack_q8_0(std::span<const BlockQ8_0> blocks, std::byte* quants, std::byte* meta) {
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::memcpy(quants + 32 * b, blocks[b].qs, 32);
    store_u16(meta + 2 * b, blocks[b].d);
  }
}

void repack_q4_0(std::span<const BlockQ4_0> blocks, std::byte* quants, std::byte* meta) {
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::memcpy(quants + 16 * b, blocks[b].qs, 16);
    store_u16(meta + 2 * b, blocks[b].d);
  }
}

// Q4_K / Q5_K meta: d, dmin, scales[12].
template <typename Block>
void repack_k4_meta(const Block& block, std::byte* meta) {
  store_u16(meta, block.d);
  store_u16(meta + 2, block.dmin);
  std::memcpy(meta + 4, block.scales, kScaleBytesK4);
}

void repack_q4_k(std::span<const BlockQ4K> blocks, std::byte* quants, std::byte* meta) {
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::memcpy(quants + 128 * b, blocks[b].qs, 128);
    repack_k4_meta(blocks[b], meta + 16 * b);
  }
}

void repack_q5_k(std::span<const BlockQ5K> blocks, std::byte* quants, std::byte* meta) {
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::memcpy(quants + 160 * b, blocks[b].qs, 128);
    std::memcpy(quants + 160 * b + 128, blocks[b].qh, 32);
    repack_k4_meta(blocks[b], meta + 16 * b);
  }
}

void repack_q6_k(std::span<const BlockQ6K> blocks, std::byte* quants, std::byte* meta) {
  const size_t n_blocks = blocks.size();
  for (size_t b = 0; b < n_blocks; ++b) {
    std::memcpy(quants + 192 * b, blocks[b].ql, 128);
    std::memcpy(quants + 192 * b + 128, blocks[b].qh, 64);
    std::memcpy(meta + 16 * b, blocks[b].scales, 16);
    store_u16(meta + 16 * n_blocks + 2 * b, blocks[b].d);
  }
}

void repack_row(WeightType type, std::span<const std::byte> row, std::byte* quants,
                std::byte* meta) {
  switch (type) {
    case WeightType::kQ8_0:
      return repack_q8_0(as_blocks<BlockQ8_0>(row), quants, meta);
    case WeightType::kQ4_0:
      return repack_q4_0(as_blocks<BlockQ4_0>(row), quants, meta);
    case WeightType::kQ4_K:
      return repack_q4_k(as_blocks<BlockQ4K>(row), quants, meta);
    case WeightType::kQ5_K:
      return repack_q5_k(as_blocks<BlockQ5K>(row), quants, meta);
    case WeightType::kQ6_K:
      return repack_q6_k(as_blocks<BlockQ6K>(row), quants, meta);
    default:
      break;
  }
  STRATA_CHECK(false, "no CUDA repacking for ", weight_type_name(type));
}

}  // namespace

CudaWeightMatrix CudaWeightMatrix::upload(const WeightMatrix& w) {
  const RepackedBlock block = repacked_block(w.type);
  STRATA_CHECK(block.elems > 0, "no CUDA kernels for weight type ", weight_type_name(w.type));
  STRATA_CHECK(w.n_rows > 0 && w.row_length > 0 && w.row_length <= INT_MAX / 4 &&
                   w.row_length % block.elems == 0,
               weight_type_name(w.type), " matrix of ", w.n_rows, " x ", w.row_length,
               ": rows must be a whole number of ", block.elems, "-element blocks");
  STRATA_CHECK(w.data != nullptr, "null weights");

  CudaWeightMatrix m;
  m.type_ = w.type;
  m.n_rows_ = w.n_rows;
  m.row_length_ = w.row_length;
  const int64_t n_blocks = w.row_length / block.elems;
  m.quant_row_bytes_ = n_blocks * block.quant_bytes;
  m.meta_row_bytes_ = cuda_layout::round_up(n_blocks * block.meta_bytes, 16);
  const auto rows_bytes = static_cast<size_t>(m.n_rows_ * m.quant_row_bytes_);
  m.quants_ = DeviceBuffer(rows_bytes + cuda_layout::kQuantsTailBytes);
  STRATA_CUDA_CHECK(cudaMemset(m.quants_.as<std::byte>() + rows_bytes, 0,
                               static_cast<size_t>(cuda_layout::kQuantsTailBytes)));
  m.meta_ = DeviceBuffer(static_cast<size_t>(m.n_rows_ * m.meta_row_bytes_));

  if (cuda_layout::is_plain(w.type)) {  // the file's rows as they are
    STRATA_CUDA_CHECK(cudaMemcpy(m.quants_.data(), w.data, rows_bytes, cudaMemcpyHostToDevice));
    return m;
  }

  const auto file_row_bytes =
      static_cast<size_t>(*weight_bytes(w.type, static_cast<uint64_t>(w.row_length)));
  const int64_t rows_per_copy =
      std::max<int64_t>(1, kStagingBytes / (m.quant_row_bytes_ + m.meta_row_bytes_));
  // Zeroed once: padding bytes are never written, so they stay zero.
  std::vector<std::byte> quants(static_cast<size_t>(rows_per_copy * m.quant_row_bytes_));
  std::vector<std::byte> meta(static_cast<size_t>(rows_per_copy * m.meta_row_bytes_));
  for (int64_t first = 0; first < m.n_rows_; first += rows_per_copy) {
    const int64_t n = std::min(rows_per_copy, m.n_rows_ - first);
    for (int64_t r = 0; r < n; ++r) {
      const std::span<const std::byte> row(w.data + static_cast<size_t>(first + r) * file_row_bytes,
                                           file_row_bytes);
      repack_row(w.type, row, quants.data() + r * m.quant_row_bytes_,
                 meta.data() + r * m.meta_row_bytes_);
    }
    STRATA_CUDA_CHECK(cudaMemcpy(m.quants_.as<std::byte>() + first * m.quant_row_bytes_,
                                 quants.data(), static_cast<size_t>(n * m.quant_row_bytes_),
                                 cudaMemcpyHostToDevice));
    STRATA_CUDA_CHECK(cudaMemcpy(m.meta_.as<std::byte>() + first * m.meta_row_bytes_, meta.data(),
                                 static_cast<size_t>(n * m.meta_row_bytes_),
                                 cudaMemcpyHostToDevice));
  }
  return m;
}

}  // namespace strata
