// The Prometheus text exposition format, version 0.0.4 (what `GET /metrics` answers with
// Content-Type "text/plain; version=0.0.4"): the few pieces every metric writes, so the
// escaping and number rules live in one place.
//
//   # HELP name text          (text: backslash and newline escaped)
//   # TYPE name counter|gauge|histogram
//   name{label="value",...} 1.5
//
// Pure functions: any thread.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace strata::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

struct Label {
  std::string_view name;   // [a-zA-Z_][a-zA-Z0-9_]*, chosen by us, written as is
  std::string_view value;  // any text; escaped when written
};

// "# HELP name help\n# TYPE name type\n": once per family, before its samples.
void write_family_header(std::string& out, std::string_view name, std::string_view help,
                         MetricType type);

// "name{a="x",b="y"} value\n", or "name value\n" without labels.
void write_sample(std::string& out, std::string_view name, std::initializer_list<Label> labels,
                  double value);

// A label value with backslash, double quote and newline escaped (\\, \", \n).
std::string escape_label_value(std::string_view value);

// Shortest text that reads back as the same double ("0.005", "60", "1e+21"); "+Inf",
// "-Inf" and "NaN" as the format spells them.
std::string format_value(double value);

}  // namespace strata::metrics
