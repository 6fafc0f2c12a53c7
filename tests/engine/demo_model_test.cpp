// The bundled demo model (models/strata-demo.gguf, tools/demo-model/) writes
// English.
//
//   Words: greedy and sampled completions of plain and chat prompts, through
//   the real tokenizer, chat template and generator; at least 70% of the words
//   they hold must be in Debian's American English word list (wamerican).
//   Perplexity: on tests/data/demo_model_heldout.json, opening paragraphs of
//   Brown documents the model never trained on. It must beat
//     - a unigram model fitted to the sample itself (an oracle that knows the
//       sample's token frequencies; computed here), and
//     - kMaxHeldoutPerplexity, a smoothed bigram model fitted to the model's
//       own training tokens (tools/demo-model/baseline_perplexity.py prints it).
//   A model that has learned nothing beyond which tokens are common fails both.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/completion.h"
#include "engine/engine.h"
#include "engine/kv_sizing.h"
#include "engine/model_fingerprint.h"
#include "engine/model_runtime.h"
#include "model/chat/chat_template.h"
#include "model/loaded_model.h"

namespace strata {
namespace {

const std::string kModelPath = std::string(STRATA_SOURCE_DIR) + "/models/strata-demo.gguf";
const std::string kWordList = "/usr/share/dict/american-english";
constexpr double kMinEnglishFraction = 0.70;
constexpr int64_t kMinWords = 100;  // so that a model that stops at once cannot pass
// Token perplexity on the sample of a bigram model interpolated with an add-one
// unigram, fitted to the demo model's training tokens (weight chosen on the
// held-out stream): 288.5 (tools/demo-model/baseline_perplexity.py). Uniform
// over the vocabulary is 8192.
constexpr double kMaxHeldoutPerplexity = 288.5;

std::set<std::string> read_word_list() {
  std::ifstream in(kWordList);
  std::set<std::string> words;
  for (std::string line; std::getline(in, line);) {
    for (char& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    words.insert(line);
  }
  return words;
}

// Runs of ASCII letters, with an inner apostrophe ("didn't", "jury's"), lower-cased.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    while (!word.empty() && word.back() == '\'') word.pop_back();
    if (!word.empty()) words.push_back(word);
    word.clear();
  };
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalpha(u)) {
      word += static_cast<char>(std::tolower(u));
    } else if (c == '\'' && !word.empty()) {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  return words;
}

bool is_english(const std::set<std::string>& list, const std::string& word) {
  // The list holds every letter of the alphabet; alone, other than "a" and "I",
  // one is a fragment of a broken word, not English.
  if (word.size() == 1) return word == "a" || word == "i";
  if (list.contains(word)) return true;
  const size_t apostrophe = word.find('\'');  // "jury's" when only "jury" is listed
  return apostrophe != std::string::npos && list.contains(word.substr(0, apostrophe));
}

class DemoModelTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = LoadedModel::open(kModelPath).release();
    runtime_ = make_runtime(*model_, {.kv_layout = kv_layout_for(model_->config(),
                                                                 KvLayout::kDefaultBlockTokens,
                                                                 WeightType::kF32),
                                      .n_kv_blocks = 256, .n_threads = 0,
                                      .backend = BackendChoice::kCpu})
                   .release();
  }
  static void TearDownTestSuite() {
    delete runtime_;
    delete model_;
  }

  std::vector<TokenId> chat_prompt(const std::string& user) const {
    const std::vector<ChatMessage> messages = {{.role = "user", .content = user}};
    return model_->encode_chat({.messages = chat_messages_value(messages)}).tokens;
  }

  std::string complete(const std::vector<TokenId>& prompt, const SamplingParams& sampling) const {
    // An Engine with one request over the runtime's backend and pool.
    Engine engine(runtime_->backend(), runtime_->kv_blocks(), model_->tokenizer(),
                  {.scheduler = {.model_fingerprint =
                                     model_fingerprint(model_->file(), runtime_->kv_layout())}});
    return run_to_completion(engine, {.prompt = prompt, .sampling = sampling, .max_tokens = 64})
        .text;
  }

  // Logits at every position of `tokens` in one prefill.
  std::vector<float> all_logits(const std::vector<TokenId>& tokens) const {
    std::vector<BlockId> table;
    const int64_t n_blocks = runtime_->kv_layout().blocks_for(static_cast<int64_t>(tokens.size()));
    for (int64_t i = 0; i < n_blocks; ++i) table.push_back(*runtime_->kv_blocks().allocate());
    BatchSequence seq{.tokens = tokens, .n_past = 0, .block_table = table, .all_logits = true};
    std::vector<float> logits;
    runtime_->backend().forward({&seq, 1}, logits);
    for (BlockId block : table) runtime_->kv_blocks().free(block);
    return logits;
  }

  static LoadedModel* model_;
  static ModelRuntime* runtime_;
};

LoadedModel* DemoModelTest::model_ = nullptr;
ModelRuntime* DemoModelTest::runtime_ = nullptr;

TEST_F(DemoModelTest, WritesEnglishWords) {
  const std::set<std::string> list = read_word_list();
  ASSERT_GT(list.size(), 50000u) << kWordList
                                 << " missing: scripts/install-deps installs wamerican";
  std::vector<std::vector<TokenId>> prompts;
  for (const char* text : {"The history of the city", "When the war was over, the old man",
                           "The committee said that"}) {
    prompts.push_back(model_->tokenizer().encode(text, {.add_special = true}));
  }
  for (const char* text : {"The jury said the election was conducted fairly.",
                           "She walked to the window and looked out at the rain.",
                           "Tell me about the new school."}) {
    prompts.push_back(chat_prompt(text));
  }
  int64_t n_words = 0, n_english = 0;
  std::set<std::string> distinct;
  for (const std::vector<TokenId>& prompt : prompts) {
    std::vector<std::string> texts = {complete(prompt, {.temperature = 0.0f})};
    for (uint64_t seed : {1, 2}) {
      texts.push_back(complete(prompt, {.temperature = 0.8f, .top_p = 0.95f, .seed = seed}));
    }
    for (const std::string& text : texts) {
      std::cout << "---\n" << text << "\n";
      for (const std::string& word : words_of(text)) {
        ++n_words;
        n_english += is_english(list, word);
        distinct.insert(word);
      }
    }
  }
  const double fraction = n_words > 0 ? static_cast<double>(n_english) / n_words : 0.0;
  std::cout << n_english << " of " << n_words << " words in the word list (" << fraction * 100
            << "%), " << distinct.size() << " distinct\n";
  EXPECT_GE(n_words, kMinWords);
  EXPECT_GE(distinct.size(), 50u) << "the completions repeat a few words";
  EXPECT_GE(fraction, kMinEnglishFraction);
}

TEST_F(DemoModelTest, HeldOutPerplexityBeatsBaselines) {
  std::ifstream in(std::string(STRATA_SOURCE_DIR) + "/tests/data/demo_model_heldout.json");
  const nlohmann::json sample = nlohmann::json::parse(in);
  const int64_t n_vocab = model_->config().n_vocab;
  const int64_t window = std::min<int64_t>(model_->config().context_length, 512);
  double nll = 0;
  int64_t n_predicted = 0;
  std::map<TokenId, int64_t> counts;  // the unigram oracle's: predicted tokens of the sample
  for (const nlohmann::json& entry : sample["texts"]) {
    const std::vector<TokenId> tokens =
        model_->tokenizer().encode(entry["text"].get<std::string>(), {.add_special = true});
    // Windows of at most `window` tokens, each from a fresh context.
    for (size_t first = 0; first + 1 < tokens.size(); first += static_cast<size_t>(window)) {
      const size_t end = std::min(tokens.size(), first + static_cast<size_t>(window));
      const std::vector<TokenId> part(tokens.begin() + static_cast<ptrdiff_t>(first),
                                      tokens.begin() + static_cast<ptrdiff_t>(end));
      const std::vector<float> logits = all_logits(part);
      for (size_t pos = 0; pos + 1 < part.size(); ++pos) {
        const float* row = logits.data() + pos * static_cast<size_t>(n_vocab);
        const float max = *std::max_element(row, row + n_vocab);
        double sum = 0;
        for (int64_t v = 0; v < n_vocab; ++v) sum += std::exp(static_cast<double>(row[v] - max));
        nll -= static_cast<double>(row[part[pos + 1]] - max) - std::log(sum);
        ++counts[part[pos + 1]];
        ++n_predicted;
      }
    }
  }
  ASSERT_GT(n_predicted, 500);
  double unigram_nll = 0;
  for (const auto& [token, count] : counts) {
    unigram_nll -= static_cast<double>(count) * std::log(static_cast<double>(count) / n_predicted);
  }
  const double perplexity = std::exp(nll / n_predicted);
  const double unigram_perplexity = std::exp(unigram_nll / n_predicted);
  std::cout << "held-out: " << n_predicted << " tokens, perplexity " << perplexity
            << " (loss " << nll / n_predicted << "); unigram oracle " << unigram_perplexity
            << "; bigram baseline " << kMaxHeldoutPerplexity << "; uniform " << n_vocab << "\n";
  EXPECT_LT(perplexity, unigram_perplexity);
  EXPECT_LT(perplexity, kMaxHeldoutPerplexity);
}

}  // namespace
}  // namespace strata
