// libFuzzer target for GGUF -> model loading: the input is written as a model
// file and opened with LoadedModel::open, as `strata serve` opens one, and
// summarized as `strata info` does. A file that parses but lies — shapes,
// types, offsets, counts, metadata that disagree with the tensors, a tokenizer
// that does not fit the weights — must be refused with an exception (a
// std::runtime_error naming the file; ModelError for the summary).
//
// Promises checked on a model that loads:
//  - the file keeps every promise of GgufFile (tests/fuzz/gguf_invariants.h);
//  - the hyperparameters are consistent and every weight the engine reads lies
//    in the file with the shape the configuration gives it (each byte touched);
//  - the vocabulary is the embedding's: every id the tokenizer can produce has
//    an embedding row and every row a token, and embedding any of them works;
//  - text and a chat encode to ids in the vocabulary and decode again.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/str_cat.h"
#include "model/gguf/gguf_file.h"
#include "model/loaded_model.h"
#include "model/model_summary.h"
#include "model/tokenizer/utf8.h"
#include "tests/fuzz/gguf_invariants.h"

namespace strata {
namespace {

std::string* model_path = nullptr;  // the file each input is written to

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "model_load_fuzzer: %s\n", what.c_str());
  std::abort();
}

void write_file(const std::string& path, std::span<const uint8_t> bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail("cannot create " + path);
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) fail("cannot write " + path);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

// The bytes the engine reads for `m` lie in the file, and it has `rows` rows of
// `cols` values; reading them all makes the sanitizer (or a fault) catch a lie.
uint8_t touch_matrix(const WeightMatrix& m, int64_t cols, int64_t rows,
                     std::span<const std::byte> file, const std::string& name) {
  if (m.row_length != cols || m.n_rows != rows) {
    fail(str_cat(name, " is ", m.n_rows, "x", m.row_length, ", the config says ", rows, "x", cols));
  }
  const std::optional<uint64_t> n_bytes =
      weight_bytes(m.type, static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols));
  if (!n_bytes) fail(name + ": no byte size");
  const auto* begin = m.data;
  if (begin < file.data() || begin + *n_bytes > file.data() + file.size()) {
    fail(name + " reaches outside the file");
  }
  uint8_t sum = 0;
  for (uint64_t i = 0; i < *n_bytes; ++i) sum ^= static_cast<uint8_t>(begin[i]);
  return sum;
}

void check_vector(const std::vector<float>& v, int64_t n, const std::string& name) {
  if (static_cast<int64_t>(v.size()) != n) fail(str_cat(name, " has ", v.size(), " values"));
}

void check_weights(const LoadedModel& model) {
  const ModelConfig& c = model.config();
  if (c.n_embd <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 ||
      c.head_dim <= 0 || c.n_ffn <= 0 || c.n_vocab <= 0 || c.context_length <= 0) {
    fail("a hyperparameter is not positive");
  }
  if (c.n_heads % c.n_kv_heads != 0 || c.head_dim % 2 != 0) fail("heads do not group or pair");
  const ModelWeights& w = model.weights();
  const std::span<const std::byte> file = model.file().bytes();
  const int64_t q_dim = c.n_heads * c.head_dim;
  const int64_t kv_dim = c.n_kv_heads * c.head_dim;
  uint8_t sum = touch_matrix(w.token_embd(), c.n_embd, c.n_vocab, file, "token_embd");
  sum ^= touch_matrix(w.output(), c.n_embd, c.n_vocab, file, "output");
  check_vector(std::vector<float>(w.output_norm().begin(), w.output_norm().end()), c.n_embd,
               "output_norm");
  if (c.has_rope_freqs != !w.rope_freqs().empty()) fail("rope_freqs disagrees with the config");
  if (c.has_rope_freqs && static_cast<int64_t>(w.rope_freqs().size()) != c.head_dim / 2) {
    fail("rope_freqs has the wrong length");
  }
  if (static_cast<int64_t>(w.layers().size()) != c.n_layers) fail("layers missing");
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const LayerWeights& l = w.layers()[static_cast<size_t>(i)];
    const std::string p = str_cat("blk.", i, ".");
    check_vector(l.attn_norm, c.n_embd, p + "attn_norm");
    check_vector(l.ffn_norm, c.n_embd, p + "ffn_norm");
    sum ^= touch_matrix(l.wq, c.n_embd, q_dim, file, p + "attn_q");
    sum ^= touch_matrix(l.wk, c.n_embd, kv_dim, file, p + "attn_k");
    sum ^= touch_matrix(l.wv, c.n_embd, kv_dim, file, p + "attn_v");
    sum ^= touch_matrix(l.wo, q_dim, c.n_embd, file, p + "attn_output");
    sum ^= touch_matrix(l.w_gate, c.n_embd, c.n_ffn, file, p + "ffn_gate");
    sum ^= touch_matrix(l.w_up, c.n_embd, c.n_ffn, file, p + "ffn_up");
    sum ^= touch_matrix(l.w_down, c.n_ffn, c.n_embd, file, p + "ffn_down");
    const bool qwen2 = c.arch == Architecture::kQwen2;
    check_vector(l.bq, qwen2 ? q_dim : 0, p + "attn_q.bias");
    check_vector(l.bk, qwen2 ? kv_dim : 0, p + "attn_k.bias");
    check_vector(l.bv, qwen2 ? kv_dim : 0, p + "attn_v.bias");
    const bool qwen3 = c.arch == Architecture::kQwen3;
    check_vector(l.q_norm, qwen3 ? c.head_dim : 0, p + "attn_q_norm");
    check_vector(l.k_norm, qwen3 ? c.head_dim : 0, p + "attn_k_norm");
  }
  (void)sum;  // read only to touch the bytes
}

void check_tokenizer(const LoadedModel& model) {
  const Tokenizer& tokenizer = model.tokenizer();
  const int64_t n_vocab = model.config().n_vocab;
  if (tokenizer.n_vocab() != n_vocab) {
    fail(str_cat("the tokenizer has ", tokenizer.n_vocab(), " tokens, the embedding ", n_vocab,
                 " rows"));
  }
  // Embedding the first and last ids dequantizes rows at both ends of the table.
  const std::vector<int32_t> ends = {0, static_cast<int32_t>(n_vocab - 1)};
  std::vector<float> embedded(ends.size() * static_cast<size_t>(model.config().n_embd));
  model.weights().embed(ends, embedded);

  const std::vector<ChatMessage> chat = {{.role = "system", .content = "Be brief."},
                                         {.role = "user", .content = "hello <s> \xC3\xA9!\n"}};
  std::vector<std::vector<TokenId>> encodings = {
      tokenizer.encode(chat[1].content, {.add_special = true, .parse_special = false}),
      tokenizer.encode(chat[1].content, {.add_special = false, .parse_special = true})};
  try {
    encodings.push_back(model.encode_chat({.messages = chat_messages_value(chat)}).tokens);
  } catch (const std::invalid_argument&) {
    // The model's template may refuse a system turn.
  }
  for (const std::vector<TokenId>& ids : encodings) {
    for (TokenId id : ids) {
      if (id < 0 || id >= n_vocab) fail(str_cat("encode gave id ", id));
    }
    if (!utf8::is_valid(tokenizer.decode(ids, {.render_special = true}))) {
      fail("decoded text is not UTF-8");
    }
  }
}

void remove_model_dir() {
  std::error_code ignored;
  std::filesystem::remove_all(std::filesystem::path(*model_path).parent_path(), ignored);
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace strata;
  set_log_level(LogLevel::kError);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    str_cat("strata_model_load_fuzzer_", ::getpid());
  std::filesystem::create_directories(dir);
  model_path = new std::string((dir / "model.gguf").string());  // never freed
  std::atexit(remove_model_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  const std::span<const uint8_t> input(data, size);

  // `strata info`: the header alone, from memory.
  try {
    const GgufFile file = GgufFile::parse(std::as_bytes(input));
    try {
      summarize_model(file);
    } catch (const ModelError&) {
      // Refused, as it should be: the summary names what is wrong.
    }
  } catch (const GgufError&) {
    // Not a GGUF file: the reader's own fuzzer covers these.
  }

  // `strata serve`: the whole model, from a file.
  write_file(*model_path, input);
  std::unique_ptr<LoadedModel> model;
  try {
    model = LoadedModel::open(*model_path);
  } catch (const std::runtime_error& e) {
    if (!std::string_view(e.what()).starts_with(*model_path)) {
      fail(std::string("a refusal that does not name the file: ") + e.what());
    }
    return 0;
  }
  const std::string violation = gguf_invariant_violation(model->file(), model->file().bytes());
  if (!violation.empty()) fail("the loaded file breaks a GGUF promise: " + violation);
  check_weights(*model);
  check_tokenizer(*model);
  return 0;
}
