#include "model/tokenizer/nfc.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "common/check.h"

namespace strata {

std::string to_nfc(std::string_view text) {
  bool all_ascii = true;
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      all_ascii = false;
      break;
    }
  }
  if (all_ascii) return std::string(text);

  utf8proc_uint8_t* composed = nullptr;
  const utf8proc_ssize_t n_bytes =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &composed,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  // The encoder sanitizes its input first, so utf8proc can only fail on memory.
  STRATA_CHECK(n_bytes >= 0, "utf8proc_map: ", utf8proc_errmsg(n_bytes));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(composed, &std::free);
  return std::string(reinterpret_cast<const char*>(composed), static_cast<size_t>(n_bytes));
}

}  // namespace strata
