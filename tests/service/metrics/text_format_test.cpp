#include "service/metrics/text_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace strata::metrics {
namespace {

TEST(TextFormatTest, EscapesLabelValues) {
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

TEST(TextFormatTest, FormatsValues) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(42), "42");
  EXPECT_EQ(format_value(10'000'000), "10000000");
  EXPECT_EQ(format_value(0.005), "0.005");
  EXPECT_EQ(format_value(2.5), "2.5");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
}

TEST(TextFormatTest, WritesHeaderAndSamples) {
  std::string out;
  write_family_header(out, "x_total", "Line one\nback\\slash \"quoted\".", MetricType::kCounter);
  write_sample(out, "x_total", {}, 3);
  write_sample(out, "x_total", {{"a", "1"}, {"b", "say \"hi\""}}, 0.5);
  EXPECT_EQ(out,
            "# HELP x_total Line one\\nback\\\\slash \"quoted\".\n"
            "# TYPE x_total counter\n"
            "x_total 3\n"
            "x_total{a=\"1\",b=\"say \\\"hi\\\"\"} 0.5\n");
}

}  // namespace
}  // namespace strata::metrics
