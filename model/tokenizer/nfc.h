// Unicode normalization form C, for tokenizers whose Hugging Face normalizer is
// NFC (Qwen2/Qwen3): "e" + U+0301 becomes "é" before pre-tokenization.
#pragma once

#include <string>
#include <string_view>

namespace strata {

// `text` must be valid UTF-8. ASCII-only text is returned unchanged without
// calling into utf8proc (it is always in NFC).
std::string to_nfc(std::string_view text);

}  // namespace strata
