#include "tests/fuzz/gguf_invariants.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <vector>

#include "common/str_cat.h"

namespace strata {
namespace {

std::string array_violation(const std::string& key, const GgufValue& value) {
  const GgufArray* array = value.as_array();
  if (array == nullptr) return "";
  for (const GgufValue& item : array->items) {
    if (item.type() != array->element_type) return str_cat("metadata '", key, "' mixes item types");
    if (std::string problem = array_violation(key, item); !problem.empty()) return problem;
  }
  return "";
}

std::string tensor_violation(const GgufFile& file, const GgufTensorInfo& t,
                             std::span<const std::byte> bytes) {
  auto fail = [&](const char* what) { return str_cat("tensor '", t.name, "': ", what); };
  if (t.dims.empty() || t.dims.size() > GgufFile::kMaxDims) return fail("dims count");
  uint64_t n_elems = 1;
  for (uint64_t d : t.dims) {
    if (d == 0) return fail("zero dim");
    n_elems *= d;  // the parser guarantees no overflow; a wrong product shows below
  }
  if (n_elems != t.n_elems) return fail("n_elems");
  const WeightTypeInfo* info = find_weight_type(static_cast<uint32_t>(t.type));
  if (info == nullptr) return fail("type");
  if (t.dims[0] % info->block_elems != 0) return fail("row blocks");
  if (weight_bytes(t.type, t.n_elems) != t.n_bytes) return fail("n_bytes");
  if (t.offset % file.alignment() != 0) return fail("offset alignment");
  if (t.data.size() != t.n_bytes) return fail("span size");
  if (t.data.data() != bytes.data() + file.data_offset() + t.offset) return fail("span start");
  if (file.data_offset() + t.offset + t.n_bytes > bytes.size()) return fail("outside input");
  if (file.find_tensor(t.name) != &t) return fail("index");
  return "";
}

}  // namespace

std::string gguf_invariant_violation(const GgufFile& file, std::span<const std::byte> bytes) {
  if (file.version() != 2 && file.version() != 3) return "version";
  if (!std::has_single_bit(file.alignment())) return "alignment";
  if (file.data_offset() % file.alignment() != 0) return "data offset alignment";

  for (const auto& [key, value] : file.metadata()) {
    if (file.find(key) != &value) return str_cat("metadata '", key, "' index");
    if (std::string problem = array_violation(key, value); !problem.empty()) return problem;
    (void)value.describe();
  }

  unsigned checksum = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    if (std::string problem = tensor_violation(file, t, bytes); !problem.empty()) return problem;
    for (std::byte b : t.data) checksum += static_cast<unsigned>(b);  // ASan sees any stray read
  }
  // Stored to a volatile so that the compiler keeps the reads above.
  volatile unsigned sink = checksum;
  (void)sink;

  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& t : file.tensors()) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i - 1]->offset + by_offset[i - 1]->n_bytes > by_offset[i]->offset) {
      return str_cat("tensors '", by_offset[i - 1]->name, "' and '", by_offset[i]->name,
                     "' overlap");
    }
  }
  return "";
}

}  // namespace strata
