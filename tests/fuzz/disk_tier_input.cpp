#include "tests/fuzz/disk_tier_input.h"

#include <algorithm>

namespace strata {
namespace {

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool empty() const { return bytes_.empty(); }
  uint8_t byte() {
    if (bytes_.empty()) return 0;
    const uint8_t b = bytes_.front();
    bytes_ = bytes_.subspan(1);
    return b;
  }
  uint16_t u16() {
    const uint8_t low = byte();
    return static_cast<uint16_t>(low | byte() << 8);
  }
  // Up to n bytes, at most `limit`; fewer where the input ends.
  std::string take(size_t n, size_t limit) {
    const size_t size = std::min({n, limit, bytes_.size()});
    std::string out(reinterpret_cast<const char*>(bytes_.data()), size);
    bytes_ = bytes_.subspan(std::min(n, bytes_.size()));
    return out;
  }

 private:
  std::span<const uint8_t> bytes_;
};

void put_u16(std::vector<uint8_t>& out, size_t n) {
  out.push_back(static_cast<uint8_t>(n & 0xff));
  out.push_back(static_cast<uint8_t>(n >> 8));
}

void put_bytes(std::vector<uint8_t>& out, const std::string& bytes) {
  put_u16(out, bytes.size());
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace

DiskTierInput DiskTierInput::parse(std::span<const uint8_t> bytes) {
  Reader in(bytes);
  DiskTierInput input;
  const uint8_t flags = in.byte();
  input.has_slab = (flags & 1) != 0;
  input.pad_header = (flags & 2) != 0;
  input.has_index = (flags & 4) != 0;
  input.persist = (flags & 8) == 0;
  input.header = in.take(in.u16(), kHeaderPage);
  input.index = in.take(in.u16(), SIZE_MAX);
  while (!in.empty() && static_cast<int64_t>(input.slots.size()) < kSlots) {
    input.slots.push_back(in.take(in.u16(), kBlockBytes));
  }
  return input;
}

std::vector<uint8_t> DiskTierInput::serialize() const {
  std::vector<uint8_t> out;
  out.push_back(static_cast<uint8_t>((has_slab ? 1 : 0) | (pad_header ? 2 : 0) |
                                     (has_index ? 4 : 0) | (persist ? 0 : 8)));
  put_bytes(out, header);
  put_bytes(out, index);
  for (const std::string& slot : slots) put_bytes(out, slot);
  return out;
}

std::string DiskTierInput::slab_file() const {
  std::string file = header;
  if (pad_header) file.resize(kHeaderPage, '\0');
  for (const std::string& slot : slots) {
    std::string block = slot;
    block.resize(kBlockBytes, '\0');
    file += block;
  }
  return file;
}

ModelFingerprint disk_tier_fuzz_model() {
  ModelFingerprint model;
  for (size_t i = 0; i < model.bytes.size(); ++i) model.bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  return model;
}

}  // namespace strata
