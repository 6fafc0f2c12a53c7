// HostRegistration: page-locks a range of host memory for the GPU's DMA
// engines (cudaHostRegister) for as long as it lives, so that copies to and
// from it run at full PCIe speed and asynchronously. Where the driver refuses
// (too little lockable memory), the range stays pageable: copies still work,
// slower and staged by the driver, and pinned() says so.
//
// Threads: any; build and destroy while no copy uses the range.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace strata {

class HostRegistration {
 public:
  explicit HostRegistration(std::span<std::byte> memory);
  ~HostRegistration();
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

  bool pinned() const { return pinned_; }
  const std::string& error() const { return error_; }  // why not, when not pinned

 private:
  void* data_ = nullptr;
  bool pinned_ = false;
  std::string error_;
};

}  // namespace strata
