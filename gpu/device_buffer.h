// DeviceBuffer: one cudaMalloc'd allocation, freed with its owner. Moves, never
// copies. Sizes are in bytes; as<T>() views the memory as T elements.
//
// Threads: any, but the memory is used on streams; the owner frees it only
// after the work using it is done (the destructor does not synchronise).
#pragma once

#include <cstddef>
#include <utility>

namespace strata {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Throws CudaError (with the size) when the device has not that much free.
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Grows to at least `bytes` (contents lost); never shrinks. For scratch
  // buffers sized by the largest step seen so far. Call only when no stream
  // is using the buffer.
  void reserve(size_t bytes);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace strata
