// strata bench -m MODEL.gguf: prefill and decode speed of one sequence, as one
// JSON object, with the ceilings they are compared to measured in the same
// run. On the CPU: the machine's memory read rate divided by the weight bytes
// a decode step reads. On a GPU: the device copy bandwidth (bytes read plus
// written) over the weight and KV bytes a decode step reads, and a large bf16
// cuBLAS GEMM's rate over the prefill's arithmetic.
//
// strata bench -m MODEL.gguf --concurrency N: the same model served by an
// Engine (continuous batching) under N concurrent requests; prints throughput,
// TTFT and inter-token latency percentiles, the prefix-cache hit ratio and the
// engine's step counts next to the same single-stream ceiling.
//
// strata bench tiers -m MODEL.gguf: the KV cache's tier moves (T0 <-> T1 on
// a GPU, T1 <-> T2) against plain copies and O_DIRECT I/O, and time to first
// token by where a prompt's prefix is (bench/tiers_bench.h).
#pragma once

#include <CLI/CLI.hpp>

namespace strata {

void add_bench_command(CLI::App& app);  // strata bench -m MODEL.gguf ...

}  // namespace strata
