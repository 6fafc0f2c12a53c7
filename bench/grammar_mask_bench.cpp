// grammar_mask_bench: the cost of a constrained-decoding token mask on one core, for
// real vocabularies (Qwen3's ~151k tokens, Llama 3's ~128k) and schemas from
// tests/data/json_schemas. A seeded random model writes outputs under the masks; each
// output is written twice: "cold" builds the mask cache's entries as states first
// appear, "warm" finds them built (the steady state of a server reusing a schema).
//
// Prints one JSON object per line:
//   {"tokenizer", "schema", "n_vocab", "steps", "cold_us_mean", "cold_us_max",
//    "warm_us_mean", "warm_us_p50", "warm_us_p99", "warm_us_max", "cache_entries",
//    "compile_ms"}
// Needs the tokenizer files of tools/node (`npm ci` there). Single-threaded.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dev/hf_tokenizer_import.h"
#include "grammar/token_matcher.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/tokenizer/tokenizer.h"
#include "service/openai/json_schema_grammar.h"

namespace {

namespace g = strata::grammar;
using Clock = std::chrono::steady_clock;

constexpr int kOutputsPerSchema = 4;
constexpr size_t kLengthCap = 120;  // tokens before the model is made to finish

std::shared_ptr<const g::TokenVocabulary> load_vocabulary(const std::string& name) {
  strata::GgufWriter writer;
  for (auto& [key, value] : strata::import_hf_tokenizer(strata::resolve_hf_tokenizer_dir(name))) {
    writer.set(key, std::move(value));
  }
  std::vector<std::byte> bytes = writer.serialize();
  strata::GgufFile file = strata::GgufFile::parse(bytes);
  std::unique_ptr<strata::Tokenizer> tokenizer = strata::Tokenizer::from_gguf(file);
  std::vector<g::VocabularyToken> tokens(static_cast<size_t>(tokenizer->n_vocab()));
  for (strata::TokenId id = 0; id < tokenizer->n_vocab(); ++id) {
    g::VocabularyToken& token = tokens[static_cast<size_t>(id)];
    switch (tokenizer->token_type(id)) {
      case strata::TokenType::kNormal:
      case strata::TokenType::kByte:
      case strata::TokenType::kUserDefined:
        token = {tokenizer->token_bytes(id), g::TokenKind::kNormal};
        break;
      default:
        token.kind = tokenizer->is_end_of_generation(id) ? g::TokenKind::kEndOfSequence : g::TokenKind::kSpecial;
    }
  }
  return std::make_shared<const g::TokenVocabulary>(std::move(tokens));
}

// One output: uniform over the allowed tokens, then the shortest completion past the cap.
// Appends each mask's cost in microseconds to `mask_us`.
void write_output(const std::shared_ptr<g::TokenMaskCache>& cache, uint32_t seed, std::vector<double>& mask_us) {
  const g::TokenVocabulary& vocabulary = cache->vocabulary();
  g::TokenMatcher matcher(cache);
  std::mt19937 rng(seed);
  std::vector<uint32_t> mask(matcher.n_mask_words());
  std::vector<g::TokenId> allowed;
  for (size_t step = 0; !matcher.is_terminated(); ++step) {
    auto start = Clock::now();
    matcher.fill_next_token_mask(mask);
    mask_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    allowed.clear();
    for (size_t id = 0; id < vocabulary.n_tokens(); ++id) {
      if ((mask[id / 32] >> (id % 32)) & 1) allowed.push_back(static_cast<g::TokenId>(id));
    }
    if (allowed.empty()) return;
    g::TokenId token = allowed[rng() % allowed.size()];
    if (step >= kLengthCap) {
      std::string rest = matcher.byte_matcher().shortest_completion();
      if (rest.empty()) {
        token = vocabulary.end_tokens()[0];
      } else {
        size_t best = 0;
        for (g::TokenId candidate : allowed) {
          std::string_view bytes = vocabulary.token_bytes(candidate);
          if (bytes.size() > best && std::string_view(rest).starts_with(bytes)) {
            best = bytes.size();
            token = candidate;
          }
        }
      }
    }
    if (!matcher.accept_token(token)) return;
  }
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(q * static_cast<double>(values.size() - 1))];
}

double mean(const std::vector<double>& values) {
  double total = 0;
  for (double v : values) total += v;
  return values.empty() ? 0 : total / static_cast<double>(values.size());
}

void bench_schema(const std::string& tokenizer, const std::shared_ptr<const g::TokenVocabulary>& vocabulary,
                  const std::string& schema_name) {
  std::ifstream in(std::string(STRATA_SOURCE_DIR) + "/tests/data/json_schemas/" + schema_name + ".json");
  auto schema = strata::openai::Json::parse(in);
  auto start = Clock::now();
  auto grammar = std::make_shared<const g::Grammar>(strata::openai::json_schema_grammar(schema));
  double compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  auto cache = std::make_shared<g::TokenMaskCache>(grammar, vocabulary);
  std::vector<double> cold, warm;
  for (int i = 0; i < kOutputsPerSchema; ++i) write_output(cache, static_cast<uint32_t>(i), cold);
  for (int i = 0; i < kOutputsPerSchema; ++i) write_output(cache, static_cast<uint32_t>(i), warm);
  nlohmann::ordered_json out = {
      {"tokenizer", tokenizer}, {"schema", schema_name}, {"n_vocab", vocabulary->n_tokens()},
      {"steps", warm.size()}, {"cold_us_mean", mean(cold)}, {"cold_us_max", percentile(cold, 1.0)},
      {"warm_us_mean", mean(warm)}, {"warm_us_p50", percentile(warm, 0.5)},
      {"warm_us_p99", percentile(warm, 0.99)}, {"warm_us_max", percentile(warm, 1.0)},
      {"cache_entries", cache->n_entries()}, {"compile_ms", compile_ms}};
  std::printf("%s\n", out.dump().c_str());
  std::fflush(stdout);
}

}  // namespace

int main() {
  const std::vector<std::string> schemas = {"weather_tool_args", "user_profile", "order_with_items",
                                            "recursive_tree", "free_object", "formats_all"};
  for (const char* tokenizer : {"qwen3", "llama3"}) {
    auto vocabulary = load_vocabulary(tokenizer);
    for (const std::string& schema : schemas) bench_schema(tokenizer, vocabulary, schema);
  }
  return 0;
}
