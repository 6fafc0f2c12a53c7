// GPU discovery. Without the CUDA backend or a driver the list is empty with a
// reason; on the GPU machine every device must run this build's probe kernel.
#include "gpu/gpu_devices.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace strata {
namespace {

TEST(GpuDevicesTest, EmptyListAlwaysComesWithAReason) {
  GpuProbe probe = probe_gpus();
  if (probe.devices.empty()) {
    EXPECT_FALSE(probe.unavailable_reason.empty());
  } else {
    EXPECT_TRUE(probe.cuda_built);
  }
}

TEST(GpuDevicesTest, EveryNvidiaDeviceRunsOurKernels) {
  GpuProbe probe = probe_gpus();
  if (!probe.cuda_built) GTEST_SKIP() << probe.unavailable_reason;
  if (!std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "no NVIDIA driver here";
  ASSERT_FALSE(probe.devices.empty()) << probe.unavailable_reason;
  EXPECT_GT(probe.driver_version, 0);
  for (const GpuDevice& device : probe.devices) {
    EXPECT_FALSE(device.name.empty());
    EXPECT_GE(device.compute_major, 8) << device.name << ": Strata targets sm_80 and newer";
    EXPECT_GT(device.memory_bytes, uint64_t{1} << 30);
    EXPECT_GT(device.multiprocessors, 0);
  }
}

}  // namespace
}  // namespace strata
