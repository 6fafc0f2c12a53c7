#include "model/tokenizer/stream_decoder.h"

#include "model/tokenizer/utf8.h"

namespace strata {

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, const DecodeOptions& options)
    : tokenizer_(tokenizer), options_(options) {}

std::string StreamDecoder::feed(TokenId id) {
  const TokenType type = tokenizer_.token_type(id);
  const bool is_special = type == TokenType::kControl || type == TokenType::kUnknown;
  const std::string& bytes = (options_.render_special && is_special) ? tokenizer_.token_text(id)
                                                                     : tokenizer_.token_bytes(id);
  if (bytes.empty()) return {};

  pending_ += bytes;
  std::string out;
  out.reserve(pending_.size());
  size_t pos = 0;
  while (pos < pending_.size()) {
    const utf8::SequenceCheck check = utf8::check_sequence(std::string_view(pending_).substr(pos));
    if (check.status == utf8::SequenceStatus::kIncomplete) break;  // wait for more bytes
    if (check.status == utf8::SequenceStatus::kComplete) {
      out.append(pending_, pos, check.n_bytes);
    } else {
      out.append(utf8::kReplacementCharacter);
    }
    pos += check.n_bytes;
  }
  pending_.erase(0, pos);

  if (at_start_ && !out.empty()) {
    at_start_ = false;
    if (options_.strip_leading_space && out.front() == ' ') out.erase(0, 1);
  }
  return out;
}

std::string StreamDecoder::flush() {
  // What is held is a valid prefix of a character that never finished: one
  // maximal subpart, so one U+FFFD.
  std::string out = pending_.empty() ? std::string() : std::string(utf8::kReplacementCharacter);
  pending_.clear();
  at_start_ = true;
  return out;
}

}  // namespace strata
