#include "service/metrics/service_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace strata::metrics {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : split_lines(text)) {
    if (l == line) return true;
  }
  return false;
}

// The text format 0.0.4 grammar for one sample line: name{labels} value [timestamp].
const std::string kName = R"([a-zA-Z_:][a-zA-Z0-9_:]*)";
const std::string kLabel = R"([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")";
const std::string kNumber = R"([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?)";
const std::regex kSampleLine("^(" + kName + ")" + "(\\{" + kLabel + "(," + kLabel + ")*,?\\})?" +
                             " ([+-]?Inf|NaN|" + kNumber + ")" + "( -?[0-9]+)?$");
const std::regex kCommentLine(R"(^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$)");

// Checks `text` against the format: every sample line parses; each family's lines are
// contiguous, with exactly one HELP and one TYPE before its first sample; a sample's
// name is its family's (name_bucket, name_sum, name_count for a histogram). Returns
// the problems, one a line; empty when the text is valid.
std::string format_problems(const std::string& text) {
  struct Family {
    int n_help = 0;
    int n_type = 0;
    std::string type;
  };
  std::map<std::string, Family> families;
  std::string current;  // the family whose lines we are in
  std::ostringstream problems;
  if (text.empty() || text.back() != '\n') problems << "text must end with a newline\n";
  for (const std::string& line : split_lines(text)) {
    std::smatch match;
    if (std::regex_match(line, match, kCommentLine)) {
      const std::string name = match[2];
      if (name != current && families.contains(name)) {
        problems << "family " << name << " is not contiguous: " << line << "\n";
      }
      current = name;
      Family& family = families[name];
      if (match[1] == "HELP") {
        ++family.n_help;
      } else {
        ++family.n_type;
        family.type = match[3];
        if (!std::regex_match(family.type, std::regex("counter|gauge|histogram|summary|untyped"))) {
          problems << "unknown type: " << line << "\n";
        }
      }
    } else if (std::regex_match(line, match, kSampleLine)) {
      const std::string name = match[1];
      const Family& family = families[current];
      std::set<std::string> allowed = {current};
      if (family.type == "histogram") {
        allowed = {current + "_bucket", current + "_sum", current + "_count"};
      }
      if (!allowed.contains(name)) problems << "sample outside its family: " << line << "\n";
      if (family.n_help != 1 || family.n_type != 1) {
        problems << "sample before one HELP and one TYPE: " << line << "\n";
      }
    } else {
      problems << "not in the grammar: " << line << "\n";
    }
  }
  for (const auto& [name, family] : families) {
    if (family.n_help != 1 || family.n_type != 1) {
      problems << name << " has " << family.n_help << " HELP and " << family.n_type
               << " TYPE lines\n";
    }
  }
  return problems.str();
}

EngineGauges sample_engine() {
  return {.running = 3,
          .waiting = 2,
          .prompt_tokens = 400,
          .cached_prompt_tokens = 100,
          .generated_tokens = 10'000'000,
          .preemptions = 1,
          .steps = 77,
          .tiers = {{.tier = "gpu", .blocks_used = 10, .blocks_cached = 4, .blocks_total = 64,
                     .block_hits = 7},
                    {.tier = "disk", .blocks_used = 0, .blocks_cached = 9, .blocks_total = 1024,
                     .block_hits = 3}},
          .moves = {{.from = "gpu", .to = "disk", .bytes = 4096},
                    {.from = "disk", .to = "gpu", .bytes = 8192}},
          .moves_in_flight = 2,
          .disk_writes_enabled = true,
          .disk_write_failures = 5,
          .disk_reopens = 1};
}

TEST(ServiceMetricsTest, CountsRequestsByEndpointAndStatus) {
  ServiceMetrics metrics;
  metrics.count_request("/v1/chat/completions", 200);
  metrics.count_request("/v1/chat/completions", 200);
  metrics.count_request("/v1/chat/completions", 429);
  metrics.count_request("other", 404);
  const std::string out = metrics.render(nullptr);
  EXPECT_TRUE(has_line(out, "# TYPE strata_http_requests_total counter")) << out;
  EXPECT_TRUE(has_line(
      out, R"(strata_http_requests_total{endpoint="/v1/chat/completions",status="200"} 2)"))
      << out;
  EXPECT_TRUE(has_line(
      out, R"(strata_http_requests_total{endpoint="/v1/chat/completions",status="429"} 1)"))
      << out;
  EXPECT_TRUE(has_line(out, R"(strata_http_requests_total{endpoint="other",status="404"} 1)"))
      << out;
}

TEST(ServiceMetricsTest, CountsClientCancels) {
  ServiceMetrics metrics;
  EXPECT_TRUE(has_line(metrics.render(nullptr), "strata_client_cancels_total 0"));
  metrics.count_client_cancel();
  metrics.count_client_cancel();
  const std::string out = metrics.render(nullptr);
  EXPECT_TRUE(has_line(out, "# TYPE strata_client_cancels_total counter")) << out;
  EXPECT_TRUE(has_line(out, "strata_client_cancels_total 2")) << out;
}

TEST(ServiceMetricsTest, EscapesLabelValues) {
  ServiceMetrics metrics;
  metrics.count_request("a\"b\\c\nd", 200);
  EngineGauges engine = sample_engine();
  engine.tiers = {
      {.tier = "q\"t", .blocks_used = 1, .blocks_cached = 0, .blocks_total = 2, .block_hits = 0}};
  const std::string out = metrics.render(&engine);
  EXPECT_TRUE(has_line(out, R"(strata_http_requests_total{endpoint="a\"b\\c\nd",status="200"} 1)"))
      << out;
  EXPECT_TRUE(has_line(out, R"(strata_kv_blocks_used{tier="q\"t"} 1)")) << out;
  EXPECT_EQ(format_problems(out), "");
}

TEST(ServiceMetricsTest, ObservationsLandInTheirHistograms) {
  ServiceMetrics metrics;
  metrics.observe_time_to_first_token(0.2);
  metrics.observe_inter_token_latency(0.002);
  metrics.observe_inter_token_latency(0.02);
  metrics.observe_request_duration(7);
  const std::string out = metrics.render(nullptr);
  EXPECT_TRUE(has_line(out, R"(strata_time_to_first_token_seconds_bucket{le="0.1"} 0)"));
  EXPECT_TRUE(has_line(out, R"(strata_time_to_first_token_seconds_bucket{le="0.25"} 1)"));
  EXPECT_TRUE(has_line(out, R"(strata_time_to_first_token_seconds_bucket{le="60"} 1)"));
  EXPECT_TRUE(has_line(out, R"(strata_inter_token_latency_seconds_bucket{le="0.001"} 0)"));
  EXPECT_TRUE(has_line(out, R"(strata_inter_token_latency_seconds_bucket{le="0.0025"} 1)"));
  EXPECT_TRUE(has_line(out, R"(strata_inter_token_latency_seconds_bucket{le="2"} 2)"));
  EXPECT_TRUE(has_line(out, "strata_inter_token_latency_seconds_count 2"));
  EXPECT_TRUE(has_line(out, R"(strata_request_duration_seconds_bucket{le="5"} 0)"));
  EXPECT_TRUE(has_line(out, R"(strata_request_duration_seconds_bucket{le="10"} 1)"));
  EXPECT_TRUE(has_line(out, "strata_request_duration_seconds_sum 7"));
}

TEST(ServiceMetricsTest, WhileTheModelLoadsEngineSeriesAreLeftOut) {
  ServiceMetrics metrics;
  const std::string out = metrics.render(nullptr);
  EXPECT_EQ(out.find("strata_sequences_running"), std::string::npos) << out;
  EXPECT_EQ(out.find("strata_kv_blocks"), std::string::npos) << out;
  EXPECT_NE(out.find("# TYPE strata_time_to_first_token_seconds histogram"), std::string::npos);
  EXPECT_EQ(format_problems(out), "");
}

TEST(ServiceMetricsTest, RendersEngineGauges) {
  ServiceMetrics metrics;
  const EngineGauges engine = sample_engine();
  const std::string out = metrics.render(&engine);
  for (const char* line : {
           "# TYPE strata_prompt_tokens_total counter",
           "strata_prompt_tokens_total 400",
           "strata_cached_prompt_tokens_total 100",
           "strata_generation_tokens_total 10000000",
           "strata_preemptions_total 1",
           "strata_engine_steps_total 77",
           "# TYPE strata_sequences_running gauge",
           "strata_sequences_running 3",
           "strata_sequences_waiting 2",
           "# TYPE strata_kv_blocks_used gauge",
           R"(strata_kv_blocks_used{tier="gpu"} 10)",
           R"(strata_kv_blocks_used{tier="disk"} 0)",
           R"(strata_kv_blocks_cached{tier="gpu"} 4)",
           R"(strata_kv_blocks_cached{tier="disk"} 9)",
           R"(strata_kv_blocks_total{tier="gpu"} 64)",
           R"(strata_kv_blocks_total{tier="disk"} 1024)",
           "# TYPE strata_kv_block_hits_total counter",
           R"(strata_kv_block_hits_total{tier="gpu"} 7)",
           R"(strata_kv_block_hits_total{tier="disk"} 3)",
           "# TYPE strata_kv_bytes_moved_total counter",
           R"(strata_kv_bytes_moved_total{from="gpu",to="disk"} 4096)",
           R"(strata_kv_bytes_moved_total{from="disk",to="gpu"} 8192)",
           "strata_kv_moves_in_flight 2",
           "strata_kv_disk_writes_enabled 1",
           "# TYPE strata_kv_disk_write_failures_total counter",
           "strata_kv_disk_write_failures_total 5",
           "strata_kv_disk_reopens_total 1",
           "# TYPE strata_prefix_cache_hit_ratio gauge",
           "strata_prefix_cache_hit_ratio 0.25",
       }) {
    EXPECT_TRUE(has_line(out, line)) << line << "\n" << out;
  }
}

TEST(ServiceMetricsTest, HitRatioIsZeroBeforeAnyPrompt) {
  ServiceMetrics metrics;
  const EngineGauges engine{};
  EXPECT_TRUE(has_line(metrics.render(&engine), "strata_prefix_cache_hit_ratio 0"));
}

TEST(ServiceMetricsTest, RenderFollowsTheTextFormat) {
  ServiceMetrics metrics;
  metrics.count_request("/v1/completions", 200);
  metrics.observe_time_to_first_token(0.3);
  metrics.observe_inter_token_latency(100);  // past the last bound: +Inf only
  const EngineGauges engine = sample_engine();
  EXPECT_EQ(format_problems(metrics.render(&engine)), "");
  EXPECT_EQ(format_problems(metrics.render(nullptr)), "");
}

TEST(ServiceMetricsTest, TheFormatCheckCatchesMistakes) {
  // The checker itself: each of these must be reported.
  EXPECT_NE(format_problems("x 1\n"), "");                                         // no HELP/TYPE
  EXPECT_NE(format_problems("# HELP x X.\n# TYPE x gauge\nx{a=\"\n\"} 1\n"), "");  // raw newline
  EXPECT_NE(format_problems("# HELP x X.\n# TYPE x gauge\nx{a=b} 1\n"), "");       // unquoted
  EXPECT_NE(format_problems("# HELP x X.\n# TYPE x gauge\ny 1\n"), "");            // other family
  EXPECT_NE(format_problems("# HELP x X.\n# TYPE x gauge\n# HELP x X.\nx 1\n"), "");
  EXPECT_NE(format_problems("# HELP x X.\n# TYPE x gauge\nx one\n"), "");
  EXPECT_EQ(format_problems("# HELP x X.\n# TYPE x gauge\nx{a=\"\\\"\"} -1.5e+3\n"), "");
}

TEST(ServiceMetricsTest, ConcurrentUpdatesAreAllCounted) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20'000;
  ServiceMetrics metrics;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics, t] {
      for (int i = 0; i < kPerThread; ++i) {
        metrics.count_request(t % 2 == 0 ? "/v1/completions" : "other", 200);
        metrics.observe_inter_token_latency(0.5);
      }
    });
  }
  // Scrapes while the counts move must still be valid text.
  std::string scraped = metrics.render(nullptr);
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(format_problems(scraped), "");
  const std::string out = metrics.render(nullptr);
  EXPECT_TRUE(
      has_line(out, R"(strata_http_requests_total{endpoint="/v1/completions",status="200"} 80000)"))
      << out;
  EXPECT_TRUE(has_line(out, R"(strata_http_requests_total{endpoint="other",status="200"} 80000)"))
      << out;
  EXPECT_TRUE(has_line(out, "strata_inter_token_latency_seconds_count 160000")) << out;
  EXPECT_TRUE(has_line(out, "strata_inter_token_latency_seconds_sum 80000")) << out;
}

}  // namespace
}  // namespace strata::metrics
