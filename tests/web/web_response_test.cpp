// The HTTP answers for the page's files: type, ETag revalidation, security headers.
#include "service/web/web_response.h"

#include <gtest/gtest.h>

#include <string>

namespace {

namespace bhttp = boost::beast::http;
using strata::web::etag_matches;
using strata::web::find_web_asset;
using strata::web::web_asset_response;

bhttp::request<bhttp::string_body> get(const std::string& target,
                                       const std::string& if_none_match = "") {
  bhttp::request<bhttp::string_body> request{bhttp::verb::get, target, 11};
  if (!if_none_match.empty()) request.set(bhttp::field::if_none_match, if_none_match);
  return request;
}

TEST(WebResponseTest, ServesTheFileWithItsTypeAndSecurityHeaders) {
  const strata::web::WebAsset& asset = *find_web_asset("/app.js");
  auto response = web_asset_response(asset, get("/app.js"));
  EXPECT_EQ(response.result(), bhttp::status::ok);
  EXPECT_EQ(response[bhttp::field::content_type], "text/javascript; charset=utf-8");
  EXPECT_EQ(response[bhttp::field::etag], asset.etag);
  EXPECT_EQ(response[bhttp::field::cache_control], "no-cache");
  EXPECT_EQ(response["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(response["Content-Security-Policy"],
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  EXPECT_EQ(response[bhttp::field::x_frame_options], "DENY");
  EXPECT_TRUE(response.body() == asset.body);
}

TEST(WebResponseTest, CurrentCopyGetsNotModified) {
  const strata::web::WebAsset& asset = *find_web_asset("/");
  const std::string etag(asset.etag);
  for (const std::string& header : {etag, "W/" + etag, "\"other\", " + etag, std::string("*")}) {
    auto response = web_asset_response(asset, get("/", header));
    EXPECT_EQ(response.result(), bhttp::status::not_modified) << header;
    EXPECT_TRUE(response.body().empty()) << header;
    EXPECT_EQ(response[bhttp::field::etag], etag);
    EXPECT_FALSE(response["Content-Security-Policy"].empty());
  }
  auto stale = web_asset_response(asset, get("/", "\"0123\""));
  EXPECT_EQ(stale.result(), bhttp::status::ok);
  EXPECT_EQ(stale[bhttp::field::content_type], "text/html; charset=utf-8");
}

TEST(WebResponseTest, EtagMatching) {
  EXPECT_TRUE(etag_matches("\"a\"", "\"a\""));
  EXPECT_TRUE(etag_matches(" \"b\" ,\t\"a\" ", "\"a\""));
  EXPECT_TRUE(etag_matches("W/\"a\"", "\"a\""));
  EXPECT_TRUE(etag_matches("*", "\"a\""));
  EXPECT_FALSE(etag_matches("", "\"a\""));
  EXPECT_FALSE(etag_matches("\"ab\"", "\"a\""));
  EXPECT_FALSE(etag_matches("a", "\"a\""));
  EXPECT_FALSE(etag_matches(",,", "\"a\""));
}

}  // namespace
