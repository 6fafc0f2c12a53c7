#include "service/config/setting_values.h"

#include <gtest/gtest.h>

#include "service/config/config_error.h"

namespace strata {
namespace {

template <typename F>
std::string error_of(F&& read) {
  try {
    read();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SettingValuesTest, IntegersAreDecimalOnly) {
  EXPECT_EQ(parse_integer("42", 0, 100), 42);
  EXPECT_EQ(parse_integer("-3", -5, 5), -3);
  for (std::string_view bad : {"", " 5", "5 ", "+5", "5.0", "0x10", "1e3", "five", "5k"}) {
    EXPECT_EQ(error_of([&] { parse_integer(bad, 0, 100); }),
              "'" + std::string(bad) + "' is not an integer");
  }
  EXPECT_EQ(error_of([] { parse_integer("101", 0, 100); }),
            "101 is out of range: must be 0 to 100");
  EXPECT_EQ(error_of([] { parse_integer("0", 1, INT64_MAX); }),
            "0 is out of range: must be at least 1");
}

TEST(SettingValuesTest, Seconds) {
  EXPECT_EQ(parse_seconds("2.5", Zero::kRefused), 2.5);
  EXPECT_EQ(parse_seconds("0", Zero::kAllowed), 0);
  EXPECT_EQ(parse_seconds("1e2", Zero::kRefused), 100);
  EXPECT_EQ(error_of([] { parse_seconds("0", Zero::kRefused); }),
            "0 is out of range: must be more than 0");
  EXPECT_EQ(error_of([] { parse_seconds("nan", Zero::kAllowed); }),
            "'nan' is not a number of seconds");
  EXPECT_EQ(error_of([] { parse_seconds("10s", Zero::kAllowed); }),
            "'10s' is not a number of seconds");
}

TEST(SettingValuesTest, Lists) {
  EXPECT_EQ(split_list(""), std::vector<std::string>{});
  EXPECT_EQ(split_list(" , ,"), std::vector<std::string>{});
  EXPECT_EQ(split_list("a"), std::vector<std::string>{"a"});
  EXPECT_EQ(split_list(" a ,b,, c d "), (std::vector<std::string>{"a", "b", "c d"}));
}

TEST(SettingValuesTest, HostNamesAndOrigins) {
  EXPECT_EQ(parse_host_name("Box.LAN:8080"), "box.lan:8080");
  EXPECT_EQ(parse_host_name("[fd00::5]"), "[fd00::5]");
  EXPECT_NE(error_of([] { parse_host_name("box.lan/"); }), "(no error)");
  EXPECT_NE(error_of([] { parse_host_name("user@box"); }), "(no error)");

  EXPECT_EQ(parse_origin("*"), "*");
  EXPECT_EQ(parse_origin("HTTP://LocalHost:3000"), "http://localhost:3000");
  EXPECT_EQ(parse_origin("http://[::1]:8080"), "http://[::1]:8080");
  EXPECT_EQ(parse_origin("vscode-webview://abc"), "vscode-webview://abc");
  for (std::string_view bad :
       {"localhost", "://x", "http://", "http://a/b", "http://a?x", "null"}) {
    EXPECT_NE(error_of([&] { parse_origin(bad); }), "(no error)") << bad;
  }
}

TEST(SettingValuesTest, ApiKeys) {
  EXPECT_EQ(parse_api_key("sk-Abc_123.~"), "sk-Abc_123.~");
  for (std::string_view bad : {"a b", "a\tb", "a\nb", "k\x7f", "k\xc3\xa9"}) {
    EXPECT_EQ(error_of([&] { parse_api_key(bad); }),
              "the API key must be printable ASCII without spaces");
  }
}

}  // namespace
}  // namespace strata
