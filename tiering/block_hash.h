// BlockHash: the identity of a full KV block,
//   h = SHA-256(parent_h ‖ model_fingerprint ‖ token ids as little-endian int32).
// Chaining through the parent makes a block's hash name its whole prefix, so two
// sequences share a block only when every earlier token matches too. SHA-256,
// not a fast hash, because a prefix cache shared between users must not be
// forgeable. The first block of a sequence uses the all-zero parent.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace strata {

struct BlockHash {
  std::array<uint8_t, 32> bytes{};

  auto operator<=>(const BlockHash&) const = default;
  std::string to_hex() const;
};

// The fingerprint covers everything that changes the KV bytes of a block:
// model weights identity, quantization, KV dtype, block_tokens, RoPE settings.
// Callers build it once per loaded model (see engine/) and pass it here.
using ModelFingerprint = BlockHash;

BlockHash hash_block(const BlockHash& parent, const ModelFingerprint& model,
                     std::span<const int32_t> token_ids);

// SHA-256 of arbitrary bytes, for building fingerprints.
BlockHash sha256(std::span<const uint8_t> bytes);

struct BlockHashHasher {
  size_t operator()(const BlockHash& h) const noexcept;  // for unordered containers
};

}  // namespace strata
