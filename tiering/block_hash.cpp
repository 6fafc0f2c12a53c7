#include "tiering/block_hash.h"

#include <openssl/evp.h>

#include <cstring>
#include <vector>

#include "common/check.h"

namespace strata {
namespace {

// One-shot SHA-256 over a list of byte ranges (EVP: the non-deprecated API).
BlockHash sha256_parts(std::initializer_list<std::span<const uint8_t>> parts) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  STRATA_CHECK(ctx != nullptr, "EVP_MD_CTX_new");
  STRATA_CHECK(EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1);
  for (std::span<const uint8_t> part : parts) {
    STRATA_CHECK(EVP_DigestUpdate(ctx, part.data(), part.size()) == 1);
  }
  BlockHash out;
  unsigned int n = 0;
  STRATA_CHECK(EVP_DigestFinal_ex(ctx, out.bytes.data(), &n) == 1 && n == out.bytes.size());
  EVP_MD_CTX_free(ctx);
  return out;
}

}  // namespace

std::string BlockHash::to_hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 15]);
  }
  return hex;
}

BlockHash hash_block(const BlockHash& parent, const ModelFingerprint& model,
                     std::span<const int32_t> token_ids) {
  // Token ids as little-endian int32 so the hash is the same on every host.
  std::vector<uint8_t> tokens(token_ids.size() * 4);
  for (size_t i = 0; i < token_ids.size(); ++i) {
    uint32_t v = static_cast<uint32_t>(token_ids[i]);
    for (int b = 0; b < 4; ++b) tokens[i * 4 + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return sha256_parts({parent.bytes, model.bytes, tokens});
}

BlockHash sha256(std::span<const uint8_t> bytes) { return sha256_parts({bytes}); }

size_t BlockHashHasher::operator()(const BlockHash& h) const noexcept {
  // The bytes are already uniformly distributed: the first word is a hash.
  size_t v;
  std::memcpy(&v, h.bytes.data(), sizeof v);
  return v;
}

}  // namespace strata
