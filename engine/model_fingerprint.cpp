#include "engine/model_fingerprint.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace strata {
namespace {

void append_bytes(std::vector<uint8_t>& out, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + n);
}

void append_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));  // little endian
}

void append_hash(std::vector<uint8_t>& out, std::span<const std::byte> bytes) {
  const BlockHash h = sha256(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  append_bytes(out, h.bytes.data(), h.bytes.size());
}

}  // namespace

ModelFingerprint model_fingerprint(const GgufFile& file, const KvLayout& kv) {
  const std::span<const std::byte> bytes = file.bytes();
  const uint64_t size = bytes.size();
  const uint64_t data_begin = std::min<uint64_t>(file.data_offset(), size);
  const uint64_t data_size = size - data_begin;

  std::vector<uint8_t> message;  // tag, size, 1 + up to 64 hashes, KV settings: ~2.2 KiB
  const std::string_view tag = kModelFingerprintVersion;
  append_bytes(message, tag.data(), tag.size());
  append_u64(message, size);
  append_hash(message, bytes.first(data_begin));
  constexpr uint64_t kSample = static_cast<uint64_t>(kFingerprintSampleBytes);
  constexpr uint64_t kSamples = static_cast<uint64_t>(kFingerprintSamples);
  if (data_size <= kSamples * kSample) {
    append_hash(message, bytes.subspan(data_begin));
  } else {
    // Sample i starts at floor(span * i / 63) past data_begin (split so that
    // nothing overflows): the first at the data's start, the last ending at
    // the file's end.
    const uint64_t span = data_size - kSample;
    for (uint64_t i = 0; i < kSamples; ++i) {
      const uint64_t at = data_begin + span / (kSamples - 1) * i +
                          span % (kSamples - 1) * i / (kSamples - 1);
      append_hash(message, bytes.subspan(at, kSample));
    }
  }
  const std::string_view dtype = weight_type_name(kv.dtype);
  append_u64(message, dtype.size());
  append_bytes(message, dtype.data(), dtype.size());
  append_u64(message, static_cast<uint64_t>(kv.block_tokens));
  return sha256(message);
}

}  // namespace strata
