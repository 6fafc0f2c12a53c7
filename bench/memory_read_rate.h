// The memory-read ceiling: how fast all cores of `pool` can stream a buffer.
// Decode is bound by reading every weight once per step, so benchmarks state
// their decode speed as a ratio to this, measured in the same run.
#pragma once

#include <cstdint>
#include <span>

namespace strata {

class ThreadPool;

// Best of `repeats` multi-threaded scans of `buffer` (make it several times
// the last-level cache, e.g. 1 GiB), in 1e9 bytes per second.
double measure_read_gb_per_s(std::span<const uint8_t> buffer, ThreadPool& pool, int repeats = 3);

}  // namespace strata
