// The chat page from a real `strata serve` with an API key: its files need no key
// (the page asks for it), the API still does; revalidation and the request count.
#include <gtest/gtest.h>

#include <string>

#include "tests/service/serve/serve_process.h"

namespace {

using strata::testing::CommandResult;
using strata::testing::curl;
using strata::testing::ServeProcess;

// The value of `name` in a curl -i header block, or "".
std::string header(const std::string& head, const std::string& name) {
  const std::string key = "\n" + name + ": ";
  const size_t at = head.find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  return head.substr(start, head.find('\r', start) - start);
}

class WebServeTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServeProcess(strata::testing::tiny_serve_model(), {"--api-key", "k3y"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  // curl -i over TCP: the status line and headers, then the body.
  static std::string tcp(const std::string& args) {
    CommandResult r = curl("-i " + args);
    EXPECT_EQ(r.exit_code, 0) << r.errors;
    return r.output;
  }
  static ServeProcess* server_;
};

ServeProcess* WebServeTest::server_ = nullptr;

TEST_F(WebServeTest, PageLoadsWithoutTheKeyTheApiDoesNot) {
  const std::string page = tcp(server_->base_url() + "/");
  EXPECT_TRUE(page.starts_with("HTTP/1.1 200")) << page.substr(0, 200);
  EXPECT_EQ(header(page, "Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(header(page, "Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(header(page, "X-Content-Type-Options"), "nosniff");
  EXPECT_NE(page.find("<script type=\"module\" src=\"/app.js\"></script>"), std::string::npos);
  for (const char* path : {"/app.js", "/app.css", "/favicon.svg"}) {
    EXPECT_TRUE(tcp(server_->base_url() + path).starts_with("HTTP/1.1 200")) << path;
  }
  EXPECT_TRUE(tcp(server_->base_url() + "/v1/models").starts_with("HTTP/1.1 401"));
  EXPECT_TRUE(tcp("-H 'Authorization: Bearer k3y' " + server_->base_url() + "/v1/models")
                  .starts_with("HTTP/1.1 200"));
  EXPECT_TRUE(tcp(server_->base_url() + "/nothing-here").starts_with("HTTP/1.1 401"))
      << "an unknown path is no page file: it needs the key like the API";
}

TEST_F(WebServeTest, RevalidatesWithTheEtag) {
  const std::string first = tcp(server_->base_url() + "/app.js");
  const std::string etag = header(first, "ETag");
  ASSERT_EQ(etag.size(), 34u) << first.substr(0, 400);
  EXPECT_EQ(header(first, "Cache-Control"), "no-cache");
  const std::string again =
      tcp("-H 'If-None-Match: " + etag + "' " + server_->base_url() + "/app.js");
  EXPECT_TRUE(again.starts_with("HTTP/1.1 304")) << again.substr(0, 200);
  EXPECT_EQ(header(again, "ETag"), etag);
  EXPECT_EQ(again.find("\r\n\r\n") + 4, again.size()) << "a 304 has no body";
}

TEST_F(WebServeTest, ServedOnTheUnixSocketAndCountedInMetrics) {
  CommandResult page = curl("--unix-socket " + server_->socket_path() + " http://strata/");
  EXPECT_EQ(page.exit_code, 0) << page.errors;
  EXPECT_NE(page.output.find("<title>Strata</title>"), std::string::npos);
  const std::string metrics =
      tcp("-H 'Authorization: Bearer k3y' " + server_->base_url() + "/metrics");
  EXPECT_NE(metrics.find("strata_http_requests_total{endpoint=\"web\",status=\"200\"}"),
            std::string::npos)
      << metrics;
}

}  // namespace
