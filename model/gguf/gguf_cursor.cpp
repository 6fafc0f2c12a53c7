#include "model/gguf/gguf_cursor.h"

#include "common/str_cat.h"
#include "model/gguf/gguf_error.h"

namespace strata {

void GgufCursor::fail_truncated(uint64_t n_needed, const std::string& what) const {
  throw GgufError(
      str_cat("truncated file: ", what, " needs ", n_needed, " bytes but ", remaining(), " remain"),
      offset_);
}

void GgufCursor::fail_length(uint64_t length_at, uint64_t length, const std::string& what) const {
  // Reported where the length was read, so the message shows the absurd number itself.
  throw GgufError(
      str_cat(what, " length ", length, " exceeds the ", remaining(), " bytes remaining"),
      length_at);
}

}  // namespace strata
