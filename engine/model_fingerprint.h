// ModelFingerprint of a loaded model: names everything that changes the KV
// bytes of a block (DESIGN.md, "The KV block"), so that a block hash is never
// reused across models, quantizations or KV layouts.
//
//   fingerprint = SHA-256(version tag ‖ file size ‖ SHA-256(header)
//                         ‖ SHA-256(sample 0) ‖ … ‖ SHA-256(sample 63)
//                         ‖ KV dtype ‖ block_tokens)
//
// - header: every byte before the data section (metadata and tensor infos),
//   so architecture, RoPE keys, tensor types and shapes are all covered;
// - samples: 64 KiB of tensor data at 64 evenly spaced offsets of the data
//   section (the first at its start, the last ending at the file's end), so
//   fine-tunes with identical headers differ without hashing gigabytes; a
//   data section of at most 64 x 64 KiB is hashed whole.
// Bump kModelFingerprintVersion when the recipe changes.
//
// Threads: pure function of its arguments; any thread.
#pragma once

#include <cstdint>

#include "kernels/kv_layout.h"
#include "model/gguf/gguf_file.h"
#include "tiering/block_hash.h"

namespace strata {

inline constexpr char kModelFingerprintVersion[] = "strata-model-fingerprint-v1";
inline constexpr int64_t kFingerprintSamples = 64;
inline constexpr int64_t kFingerprintSampleBytes = 64 * 1024;

// Reads the header and 4 MiB of weights (pages of the map: a cold file costs
// one read of each sampled region).
ModelFingerprint model_fingerprint(const GgufFile& file, const KvLayout& kv);

}  // namespace strata
