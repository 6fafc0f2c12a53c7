#include "gpu/cuda_block_copier.h"

#include <memory>
#include <utility>

#include "common/check.h"
#include "gpu/cuda_check.h"

namespace strata {

CudaBlockCopier::CudaBlockCopier(std::byte* arena, int64_t slot_bytes, int64_t n_slots,
                                 int64_t block_bytes)
    : arena_(arena), slot_bytes_(slot_bytes), n_slots_(n_slots), block_bytes_(block_bytes) {
  STRATA_CHECK(block_bytes > 0 && block_bytes <= slot_bytes, "block of ", block_bytes,
               " bytes in slots of ", slot_bytes);
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaBlockCopier::~CudaBlockCopier() {
  cudaStreamSynchronize(stream_);
  cudaStreamDestroy(stream_);
}

void CudaBlockCopier::copy(std::span<const BlockCopy> copies) {
  if (copies.empty()) return;
  auto batch = std::make_unique<Batch>();
  batch->copier = this;
  for (const BlockCopy& c : copies) {
    STRATA_CHECK(c.device_block >= 0 && c.device_block < n_slots_, "block ", c.device_block);
    std::byte* slot = arena_ + c.device_block * slot_bytes_;
    const bool down = c.direction == BlockCopy::Direction::kToHost;
    STRATA_CUDA_CHECK(cudaMemcpyAsync(down ? static_cast<void*>(c.host) : slot,
                                      down ? static_cast<const void*>(slot) : c.host,
                                      static_cast<size_t>(block_bytes_),
                                      down ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice,
                                      stream_));
    batch->tags.push_back(c.tag);
  }
  STRATA_CUDA_CHECK(cudaLaunchHostFunc(stream_, &CudaBlockCopier::on_batch_done, batch.get()));
  batch.release();  // on_batch_done owns it now
}

void CUDART_CB CudaBlockCopier::on_batch_done(void* data) {
  const std::unique_ptr<Batch> batch(static_cast<Batch*>(data));
  CudaBlockCopier& self = *batch->copier;
  std::lock_guard<std::mutex> lock(self.mutex_);  // held while the listener runs: see set_listener
  self.completed_.insert(self.completed_.end(), batch->tags.begin(), batch->tags.end());
  if (self.on_completion_) self.on_completion_();
}

std::vector<uint64_t> CudaBlockCopier::take_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(completed_, {});
}

void CudaBlockCopier::wait_idle() { STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

void CudaBlockCopier::set_listener(std::function<void()> on_completion) {
  // Under the mutex: once this returns, the old listener is not running.
  std::lock_guard<std::mutex> lock(mutex_);
  on_completion_ = std::move(on_completion);
}

}  // namespace strata
