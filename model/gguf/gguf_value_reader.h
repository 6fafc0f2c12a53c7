// GgufValueReader: decodes metadata values (scalars, strings, arrays, nested
// arrays) from a GgufCursor. Limits apply across the whole file, because each
// array item costs sizeof(GgufValue) in memory however few bytes it took in
// the file: a small file must not be able to make the reader allocate a lot.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/gguf/gguf_cursor.h"
#include "model/gguf/gguf_value.h"

namespace strata {

class GgufValueReader {
 public:
  // Arrays of arrays are legal; deeper nesting than this is an attack or a bug
  // (real files nest at most once), and the reader recurses once per level.
  static constexpr int kMaxArrayDepth = 8;
  // Items of all arrays in one file. Real models hold ~1-2 million (tokens,
  // scores, token types, merges of a 150k-262k vocabulary).
  static constexpr uint64_t kMaxArrayItems = uint64_t{1} << 24;

  explicit GgufValueReader(GgufCursor& cursor) : cursor_(cursor) {}

  // Reads the type id and then the value of metadata key `key` (named in errors).
  GgufValue read_typed_value(std::string_view key);

 private:
  GgufType read_type(std::string_view key, std::string_view what);
  GgufValue read_value(GgufType type, std::string_view key, int depth);
  GgufValue read_array(std::string_view key, int depth);

  GgufCursor& cursor_;
  uint64_t n_array_items_ = 0;  // items of all arrays read so far
};

}  // namespace strata
