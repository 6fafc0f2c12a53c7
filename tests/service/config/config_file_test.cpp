#include "service/config/config_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "service/config/config_error.h"

namespace strata {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_config_text(text, "/etc/strata/strata.conf");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigFileTest, ReadsKeyValueLines) {
  std::vector<ConfigLine> lines = parse_config_text(
      "# Strata\n"
      "\n"
      "port = 8080\n"
      "   # indented comment\n"
      "Max_Waiting=10\n"
      "\tmodel =  /models/a b.gguf  \r\n"
      "socket =\n"
      "api-key = k#not=a comment\n",
      "x.conf");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].key, "port");
  EXPECT_EQ(lines[0].value, "8080");
  EXPECT_EQ(lines[0].line_number, 3);
  EXPECT_EQ(lines[1].key, "max-waiting") << "case and _ are normalized";
  EXPECT_EQ(lines[1].value, "10");
  EXPECT_EQ(lines[1].line_number, 5);
  EXPECT_EQ(lines[2].value, "/models/a b.gguf") << "trimmed, CR of CRLF included";
  EXPECT_EQ(lines[3].key, "socket");
  EXPECT_EQ(lines[3].value, "");
  EXPECT_EQ(lines[4].value, "k#not=a comment") << "# comments only at line start";
}

TEST(ConfigFileTest, QuotesAreOptional) {
  std::vector<ConfigLine> lines = parse_config_text(
      "model = \"/models/My Model.gguf\"\n"
      "model-alias = 'my model'\n"
      "host = \"\"\n"
      "api-key = \" spaced \"\n"
      "cors-origins = \"a\", \"b\"\n"
      "x = it's\n",
      "x.conf");
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0].value, "/models/My Model.gguf");
  EXPECT_EQ(lines[1].value, "my model");
  EXPECT_EQ(lines[2].value, "");
  EXPECT_EQ(lines[3].value, " spaced ") << "quotes keep inner spaces";
  EXPECT_EQ(lines[4].value, "a\", \"b") << "one pair around the whole value, no more";
  EXPECT_EQ(lines[5].value, "it's") << "a quote inside is literal";
}

TEST(ConfigFileTest, EmptyFileAndByteOrderMark) {
  EXPECT_TRUE(parse_config_text("", "x").empty());
  EXPECT_TRUE(parse_config_text("\n\n# only comments\n", "x").empty());
  std::vector<ConfigLine> lines = parse_config_text("\xEF\xBB\xBFport = 1", "x");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].key, "port");
}

TEST(ConfigFileTest, SyntaxErrorsNameTheLine) {
  EXPECT_EQ(error_of("port = 1\n\nport 8080\n"),
            "/etc/strata/strata.conf:3: expected 'key = value', got 'port 8080'");
  EXPECT_EQ(error_of("= 8080\n"),
            "/etc/strata/strata.conf:1: expected 'key = value', got '= 8080'");
  EXPECT_EQ(error_of("model = \"/a.gguf\n"),
            "/etc/strata/strata.conf:1: the value of 'model' has no closing quote");
  EXPECT_EQ(error_of("model = '\n"),
            "/etc/strata/strata.conf:1: the value of 'model' has no closing quote");
  EXPECT_EQ(error_of("port = 1\n# x\nPORT = 2\n"),
            "/etc/strata/strata.conf:3: 'port' is already set on line 1");
  EXPECT_EQ(error_of("max-waiting = 1\nmax_waiting = 2\n"),
            "/etc/strata/strata.conf:2: 'max-waiting' is already set on line 1");
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "strata_config_XXXXXX";
    char* made = mkdtemp(pattern.data());
    if (made == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = made;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ConfigFileTest, ReadTextFile) {
  TempDir dir;
  std::string file = dir.path() + "/a.conf";
  std::ofstream(file) << "port = 1\n";
  EXPECT_EQ(read_text_file(file), "port = 1\n");
  EXPECT_EQ(read_text_file(dir.path() + "/missing.conf"), std::nullopt);
  try {
    read_text_file(dir.path());
    ADD_FAILURE() << "a directory read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read '" + dir.path() + "': Is a directory");
  }
  try {
    read_text_file(file + "/below");
    ADD_FAILURE() << "a path through a file read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read '" + file + "/below': Not a directory");
  }
  std::string big = dir.path() + "/big";
  std::ofstream(big) << std::string(kMaxSettingsFileBytes + 1, 'x');
  EXPECT_THROW(read_text_file(big), ConfigError);
}

}  // namespace
}  // namespace strata
