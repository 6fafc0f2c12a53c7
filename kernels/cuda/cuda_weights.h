// CudaWeightMatrix: a GGUF weight matrix in VRAM, in the layout the CUDA
// kernels read fastest. The element values are the file's, bit for bit (no
// requantization): quantized types are split at upload into a quants array
// (per row, 16-byte aligned, so that a warp reads it in coalesced 16-byte
// loads) and a per-block metadata array (scales, mins); F32 / F16 / BF16 rows
// are copied as they are. The quants are followed by a few KB of zeros
// (cuda_layout::kQuantsTailBytes) that kernels may read past the last row.
//
// Threads: upload on any thread; the object is then immutable and its device
// memory is read by kernels on any stream.
#pragma once

#include <cstdint>

#include "gpu/device_buffer.h"
#include "kernels/cpu/matmul.h"
#include "kernels/weight_type.h"

namespace strata::cuda_layout {

// Zero bytes after a matrix's last row of quants: a kernel may read (and
// never use) up to this far past the rows, so that it need not test each
// load of a step's blocks against the matrix's end.
inline constexpr int64_t kQuantsTailBytes = 4096;

}  // namespace strata::cuda_layout

namespace strata {

class CudaWeightMatrix {
 public:
  CudaWeightMatrix() = default;
  // Repacks w on the host and copies it to the current device (synchronous).
  // w.type must be one Strata computes with (F32, F16, BF16, Q8_0, Q4_0, Q4_K,
  // Q5_K, Q6_K) and row_length a whole number of its blocks (checked).
  static CudaWeightMatrix upload(const WeightMatrix& w);

  WeightType type() const { return type_; }
  int64_t n_rows() const { return n_rows_; }
  int64_t row_length() const { return row_length_; }
  int64_t device_bytes() const { return static_cast<int64_t>(quants_.bytes() + meta_.bytes()); }

  // The kernels' view (see cuda_weights_layout.cuh for what each holds).
  const void* quants() const { return quants_.data(); }
  const void* meta() const { return meta_.data(); }
  int64_t quant_row_bytes() const { return quant_row_bytes_; }
  int64_t meta_row_bytes() const { return meta_row_bytes_; }

 private:
  WeightType type_ = WeightType::kF32;
  int64_t n_rows_ = 0;
  int64_t row_length_ = 0;
  int64_t quant_row_bytes_ = 0;
  int64_t meta_row_bytes_ = 0;
  DeviceBuffer quants_;
  DeviceBuffer meta_;
};

}  // namespace strata
