// The embedded chat page: every file is there byte for byte, under the right path,
// with a content type and an ETag, and the page itself needs nothing the CSP forbids.
#include "service/web/web_assets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

using strata::web::content_type_for;
using strata::web::find_web_asset;
using strata::web::web_assets;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(WebAssetsTest, EmbedsEachFileByteForByte) {
  const std::string web = std::string(STRATA_SOURCE_DIR) + "/web/";
  const std::string dist = std::string(STRATA_BINARY_DIR) + "/service/web/dist/";
  const std::pair<const char*, std::string> kExpected[] = {
      {"/", web + "index.html"},
      {"/favicon.svg", web + "favicon.svg"},
      {"/app.js", dist + "app.js"},
      {"/app.css", dist + "app.css"},
  };
  ASSERT_EQ(web_assets().size(), std::size(kExpected));
  for (const auto& [path, file] : kExpected) {
    const strata::web::WebAsset* asset = find_web_asset(path);
    ASSERT_NE(asset, nullptr) << path;
    EXPECT_EQ(asset->path, path);
    const std::string bytes = read_file(file);
    EXPECT_FALSE(bytes.empty()) << file;
    EXPECT_TRUE(asset->body == bytes) << path << " differs from " << file;
  }
}

TEST(WebAssetsTest, UnknownPathsHaveNoAsset) {
  EXPECT_EQ(find_web_asset("/index.html"), nullptr);
  EXPECT_EQ(find_web_asset("/app.js/"), nullptr);
  EXPECT_EQ(find_web_asset("/../app.js"), nullptr);
  EXPECT_EQ(find_web_asset(""), nullptr);
  EXPECT_EQ(find_web_asset("/v1/models"), nullptr);
}

TEST(WebAssetsTest, EtagsAreQuotedHashesOneEach) {
  std::set<std::string_view> seen;
  for (const strata::web::WebAsset& asset : web_assets()) {
    EXPECT_TRUE(std::regex_match(std::string(asset.etag), std::regex("\"[0-9a-f]{32}\"")))
        << asset.etag;
    EXPECT_TRUE(seen.insert(asset.etag).second) << asset.path;
  }
}

TEST(WebAssetsTest, ContentTypesByExtension) {
  EXPECT_EQ(content_type_for("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(content_type_for("app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(content_type_for("app.css"), "text/css; charset=utf-8");
  EXPECT_EQ(content_type_for("favicon.svg"), "image/svg+xml");
  EXPECT_EQ(content_type_for("notes"), "application/octet-stream");
  EXPECT_EQ(content_type_for("app.js.map.gz"), "application/octet-stream");
}

// What the CSP would block must not be in the page: inline scripts, inline event
// handlers, style attributes, anything from another origin.
TEST(WebAssetsTest, PageNeedsNothingTheCspForbids) {
  const std::string page(find_web_asset("/")->body);
  const std::regex script_tag("<script[^>]*>");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), script_tag);
       it != std::sregex_iterator(); ++it) {
    EXPECT_NE(it->str().find("src=\"/"), std::string::npos) << "inline script: " << it->str();
  }
  EXPECT_FALSE(std::regex_search(page, std::regex("\\son[a-z]+=", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(page, std::regex("\\sstyle=", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(page, std::regex("<style", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(page, std::regex("(src|href)=\"(https?:)?//", std::regex::icase)));
}

}  // namespace
