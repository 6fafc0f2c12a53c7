// StreamDecoder: token ids in, text out, one token at a time, for streaming a
// generation. A token may end inside a UTF-8 character (byte-fallback tokens,
// byte-level BPE pieces of CJK or emoji), so bytes are held back until their
// character is complete: every string returned is whole UTF-8 characters.
//
// Invalid bytes: a sequence that can never become valid (a stray continuation
// byte, a lead byte followed by a non-continuation) is replaced by U+FFFD as
// soon as that is certain, so one bad byte never stalls the stream; an
// incomplete character at the end is held, and becomes U+FFFD only at flush().
//
// Thread-safety: one decoder per sequence, used by one thread at a time.
#pragma once

#include <string>

#include "model/tokenizer/tokenizer.h"

namespace strata {

class StreamDecoder {
 public:
  // Keeps a reference to `tokenizer`, which must outlive the decoder.
  explicit StreamDecoder(const Tokenizer& tokenizer, const DecodeOptions& options = {});

  // The text this token completes (often empty or one token's worth; may
  // include characters begun by earlier tokens). `id` must be valid.
  std::string feed(TokenId id);

  // End of the stream: any held incomplete character as U+FFFD. The decoder
  // may then be fed again as a fresh stream.
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  DecodeOptions options_;
  std::string pending_;   // bytes of an incomplete character (< 4 bytes)
  bool at_start_ = true;  // nothing emitted yet (for strip_leading_space)
};

}  // namespace strata
