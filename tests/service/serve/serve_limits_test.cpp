// The limits and access rules of a real `strata serve`, each with its own
// server started with the flags under test: the body limit, the admission
// queue, slow and idle clients, the API key, the non-loopback guard, CORS,
// keep-alive and Expect: 100-continue.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/service/serve/serve_process.h"

namespace {

using nlohmann::json;
using strata::testing::CommandResult;
using strata::testing::curl;
using strata::testing::ServeProcess;
using strata::testing::tiny_serve_model;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// ---- A minimal HTTP/1.1 client on raw sockets --------------------------------

int connect_unix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int connect_tcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Closes its socket when it goes.
struct Socket {
  explicit Socket(int fd) : fd(fd) {}
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd;
};

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Appends what arrives within `timeout` to `data`; false when the peer closed
// (or reset) the connection.
bool read_some(int fd, std::string& data, std::chrono::milliseconds timeout) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return true;
  char buffer[16384];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n <= 0) return false;
  data.append(buffer, static_cast<size_t>(n));
  return true;
}

// Reads until the peer closes or `timeout` passes; `closed` says which.
std::string read_until_close(int fd, std::chrono::milliseconds timeout, bool& closed) {
  std::string data;
  closed = false;
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (!read_some(fd, data, std::max(left, 1ms))) {
      closed = true;
      break;
    }
  }
  return data;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Reply {
  int status = 0;
  std::multimap<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::string raw;

  std::optional<std::string> header(const std::string& name) const {
    auto it = headers.find(lower(name));
    if (it == headers.end()) return std::nullopt;
    return it->second;
  }
};

// Parses one whole response at the front of `data` and removes it; nullopt
// (and `data` untouched) when it is not all there yet. A response without a
// length runs to the end of `data` only when `at_eof`.
std::optional<Reply> take_reply(std::string& data, bool at_eof) {
  const size_t head_end = data.find("\r\n\r\n");
  if (head_end == std::string::npos) return std::nullopt;
  Reply reply;
  if (data.rfind("HTTP/1.", 0) == 0) reply.status = std::atoi(data.c_str() + data.find(' ') + 1);
  size_t line = data.find("\r\n") + 2;
  while (line < head_end) {
    const size_t end = data.find("\r\n", line);
    const std::string field = data.substr(line, end - line);
    const size_t colon = field.find(':');
    std::string value = field.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    reply.headers.emplace(lower(field.substr(0, colon)), value);
    line = end + 2;
  }
  size_t at = head_end + 4;
  if (lower(reply.header("transfer-encoding").value_or("")) == "chunked") {
    for (;;) {
      const size_t size_end = data.find("\r\n", at);
      if (size_end == std::string::npos) return std::nullopt;
      const size_t size = std::stoul(data.substr(at, size_end - at), nullptr, 16);
      if (data.size() < size_end + 2 + size + 2) return std::nullopt;
      reply.body += data.substr(size_end + 2, size);
      at = size_end + 2 + size + 2;
      if (size == 0) break;
    }
  } else if (auto length = reply.header("content-length")) {
    const size_t n = std::stoul(*length);
    if (data.size() < at + n) return std::nullopt;
    reply.body = data.substr(at, n);
    at += n;
  } else if (reply.status / 100 == 1 || reply.status == 204 || reply.status == 304) {
    // no body
  } else {
    if (!at_eof) return std::nullopt;
    reply.body = data.substr(at);
    at = data.size();
  }
  reply.raw = data.substr(0, at);
  data.erase(0, at);
  return reply;
}

// The next whole response on `fd` (reading into `buffer`), or nullopt when
// the connection closed or `timeout` passed first.
std::optional<Reply> read_reply(int fd, std::string& buffer,
                                std::chrono::milliseconds timeout = 30s) {
  const auto deadline = Clock::now() + timeout;
  bool open = true;
  for (;;) {
    if (auto reply = take_reply(buffer, !open)) return reply;
    if (!open || Clock::now() >= deadline) return std::nullopt;
    open = read_some(fd, buffer, 50ms);
  }
}

// Sends `bytes` on a fresh connection and reads one response.
Reply ask(int fd, std::string_view bytes) {
  if (fd < 0) return {};
  Socket socket(fd);
  send_all(fd, bytes);
  std::string buffer;
  return read_reply(fd, buffer).value_or(Reply{});
}

std::string get(const std::string& path, const std::string& host, const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra +
         "Connection: close\r\n\r\n";
}

std::string post(const std::string& path, const std::string& body, const std::string& host,
                 const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra +
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

std::string tcp_host(const ServeProcess& server) {
  return "127.0.0.1:" + std::to_string(server.port());
}

// An OpenAI error body's "error" object; null when the body is not one.
json error_of(const Reply& reply) {
  json body = json::parse(reply.body, nullptr, false);
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) return nullptr;
  const json& error = body["error"];
  const bool shaped = error.contains("message") && error["message"].is_string() &&
                      !error["message"].get<std::string>().empty() && error.contains("type") &&
                      error["type"].is_string() && error.contains("param") &&
                      (error["param"].is_null() || error["param"].is_string()) &&
                      error.contains("code") &&
                      (error["code"].is_null() || error["code"].is_string());
  return shaped ? error : json(nullptr);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A completion request padded with spaces to exactly `size` bytes.
std::string completion_body_of_size(size_t size) {
  std::string body = R"({"prompt": "Hi", "max_tokens": 1})";
  body.insert(body.size() - 1, size - body.size(), ' ');
  return body;
}

// `curl -s -o BODY -w '%{http_code}' ARGS`: the status and the body.
std::pair<int, std::string> curl_status(const std::string& folder, const std::string& args) {
  const std::string out = folder + "/curl-body";
  std::remove(out.c_str());
  CommandResult r = curl("-o " + out + " -w '%{http_code}' " + args);
  return {std::atoi(r.output.c_str()), strata::testing::read_file(out)};
}

// ---- The body limit -----------------------------------------------------------

class ServeBodyLimitTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServeProcess(tiny_serve_model(), {"--max-body-bytes", "4096"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static ServeProcess* server_;
};

ServeProcess* ServeBodyLimitTest::server_ = nullptr;

void expect_too_large(const std::pair<int, std::string>& reply) {
  EXPECT_EQ(reply.first, 413) << reply.second;
  json error = json::parse(reply.second, nullptr, false);
  ASSERT_TRUE(error.is_object()) << reply.second;
  EXPECT_EQ(error["error"]["type"], "invalid_request_error") << reply.second;
  EXPECT_TRUE(error["error"]["param"].is_null());
}

TEST_F(ServeBodyLimitTest, ABodyAtTheLimitIsServed) {
  const std::string file = server_->folder() + "/exact.json";
  write_file(file, completion_body_of_size(4096));
  auto reply = curl_status(server_->folder(), "--unix-socket " + server_->socket_path() +
                                                  " http://strata/v1/completions --data-binary @" +
                                                  file);
  EXPECT_EQ(reply.first, 200) << reply.second;
}

TEST_F(ServeBodyLimitTest, ContentLengthOverTheLimitIs413) {
  const std::string file = server_->folder() + "/big.json";
  write_file(file, completion_body_of_size(5000));
  const std::string args = " -H 'Content-Type: application/json' --data-binary @" + file;
  {
    SCOPED_TRACE("unix");
    expect_too_large(curl_status(server_->folder(), "--unix-socket " + server_->socket_path() +
                                                        " http://strata/v1/completions" + args));
  }
  {
    SCOPED_TRACE("tcp");
    expect_too_large(
        curl_status(server_->folder(), server_->base_url() + "/v1/chat/completions" + args));
  }
}

TEST_F(ServeBodyLimitTest, ContentLengthOverTheLimitIsRefusedBeforeTheBodyArrives) {
  // Only the headers are sent: the answer must not wait for a body.
  Reply reply =
      ask(connect_unix(server_->socket_path()),
          "POST /v1/completions HTTP/1.1\r\nHost: strata\r\nContent-Length: 100000\r\n\r\n");
  EXPECT_EQ(reply.status, 413) << reply.raw;
  EXPECT_FALSE(error_of(reply).is_null()) << reply.body;
}

TEST_F(ServeBodyLimitTest, ChunkedUploadOverTheLimitIs413) {
  const std::string file = server_->folder() + "/big-chunked.json";
  write_file(file, completion_body_of_size(5000));
  const std::string args =
      " -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary @" + file;
  {
    SCOPED_TRACE("unix");
    expect_too_large(curl_status(server_->folder(), "--unix-socket " + server_->socket_path() +
                                                        " http://strata/v1/completions" + args));
  }
  {
    SCOPED_TRACE("tcp");
    expect_too_large(
        curl_status(server_->folder(), server_->base_url() + "/v1/completions" + args));
  }
  // Raw: many small chunks, the last one crossing the limit.
  std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: strata\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 5; ++i) request += "3e8\r\n" + std::string(1000, ' ') + "\r\n";
  request += "0\r\n\r\n";
  Reply reply = ask(connect_unix(server_->socket_path()), request);
  EXPECT_EQ(reply.status, 413) << reply.raw;
  EXPECT_FALSE(error_of(reply).is_null()) << reply.body;
}

TEST_F(ServeBodyLimitTest, ExpectContinueOverTheLimitGets413InsteadOf100) {
  const std::string file = server_->folder() + "/big-expect.json";
  write_file(file, completion_body_of_size(5000));
  CommandResult r = curl("-v -o /dev/null -w '%{http_code}' -H 'Expect: 100-continue' "
                         "--unix-socket " + server_->socket_path() +
                         " http://strata/v1/completions --data-binary @" + file);
  EXPECT_EQ(r.output, "413") << r.errors;
  EXPECT_EQ(r.errors.find("100 Continue"), std::string::npos) << r.errors;
  EXPECT_TRUE(server_->running());
  EXPECT_EQ(server_->log().find("connection failed"), std::string::npos) << server_->log();
}

// ---- The admission queue --------------------------------------------------------

TEST(ServeQueueTest, AFullQueueAnswers429UntilARequestFinishes) {
  ServeProcess server(tiny_serve_model(), {"--max-running", "1", "--max-waiting", "0"});
  ASSERT_GT(server.port(), 0) << server.log();

  // A long stream whose chunks are large (20 top logprobs each): the client
  // does not read it, so the server's writes block and the request stays
  // admitted however fast the model is.
  Socket first(connect_unix(server.socket_path()));
  ASSERT_GE(first.fd, 0);
  const std::string long_request = R"({"messages": [{"role": "user", "content": "Hi"}], )"
                                   R"("max_tokens": 900, "ignore_eos": true, "stream": true, )"
                                   R"("logprobs": true, "top_logprobs": 20, "temperature": 1.0})";
  ASSERT_TRUE(send_all(first.fd, post("/v1/chat/completions", long_request, "strata")));
  std::string streamed;
  const auto started = Clock::now();
  while (streamed.find("data: ") == std::string::npos && Clock::now() - started < 30s) {
    ASSERT_TRUE(read_some(first.fd, streamed, 100ms)) << streamed;
  }
  ASSERT_NE(streamed.find("HTTP/1.1 200"), std::string::npos) << streamed;

  // Busy: refused at once, over either transport, with a hint when to retry.
  Reply refused = ask(connect_tcp(server.port()),
                      post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})",
                           tcp_host(server)));
  EXPECT_EQ(refused.status, 429) << refused.raw;
  EXPECT_EQ(refused.header("retry-after"), "1") << refused.raw;
  json error = error_of(refused);
  ASSERT_FALSE(error.is_null()) << refused.body;
  EXPECT_EQ(error["type"], "rate_limit_error");
  Reply refused_chat =
      ask(connect_unix(server.socket_path()),
          post("/v1/chat/completions",
               R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2})", "strata"));
  EXPECT_EQ(refused_chat.status, 429) << refused_chat.raw;
  EXPECT_TRUE(refused_chat.header("retry-after").has_value());

  // What needs no generation is still answered.
  Reply health = ask(connect_unix(server.socket_path()), get("/health", "strata"));
  EXPECT_EQ(health.status, 200) << health.raw;
  Reply tokens = ask(connect_unix(server.socket_path()),
                     post("/v1/tokenize", R"({"prompt": "Hi"})", "strata"));
  EXPECT_EQ(tokens.status, 200) << tokens.raw;

  // The first stream was not disturbed: read it to its end (the server closes
  // the connection once its handler is done, so its ticket is back).
  bool closed = false;
  streamed += read_until_close(first.fd, 120s, closed);
  EXPECT_TRUE(closed);
  std::optional<Reply> stream = take_reply(streamed, true);
  ASSERT_TRUE(stream.has_value());
  EXPECT_EQ(stream->status, 200);
  EXPECT_NE(stream->body.find("\"finish_reason\":\"length\""), std::string::npos)
      << stream->body.substr(stream->body.size() > 2000 ? stream->body.size() - 2000 : 0);
  EXPECT_NE(stream->body.find("data: [DONE]"), std::string::npos);

  Reply again = ask(connect_tcp(server.port()),
                    post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})",
                         tcp_host(server)));
  EXPECT_EQ(again.status, 200) << again.raw;
  EXPECT_EQ(server.log().find("connection failed"), std::string::npos) << server.log();
}

// ---- Slow, stalled and idle clients -----------------------------------------------

// How long until the server ends a stalled connection; `reply` is what it
// said first (nothing when it closed silently).
std::chrono::milliseconds time_to_close(int fd, std::string& reply,
                                        std::chrono::milliseconds limit) {
  const auto start = Clock::now();
  bool closed = false;
  reply = read_until_close(fd, limit, closed);
  return closed ? std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)
                : std::chrono::milliseconds::max();
}

class ServeTimeoutTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServeProcess(tiny_serve_model(), {"--request-timeout-seconds", "1"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  // Whole headers promising 100 bytes of body, and only some of it.
  static std::string half_a_body() {
    return "POST /v1/completions HTTP/1.1\r\nHost: " + tcp_host(*server_) +
           "\r\nContent-Length: 100\r\n\r\n{\"prompt\": ";
  }
  static ServeProcess* server_;
};

ServeProcess* ServeTimeoutTest::server_ = nullptr;

// What a stalled connection may be told before it is closed: nothing, or 408.
void expect_nothing_or_408(const std::string& said) {
  if (!said.empty()) {
    EXPECT_EQ(said.rfind("HTTP/1.1 408", 0), 0u) << said;
  }
}

TEST_F(ServeTimeoutTest, AStalledRequestIsEndedWhileOthersAreServed) {
  ASSERT_GT(server_->port(), 0) << server_->log();

  // Half the headers, then nothing; and whole headers with half a body.
  Socket half_headers(connect_unix(server_->socket_path()));
  ASSERT_GE(half_headers.fd, 0);
  ASSERT_TRUE(send_all(half_headers.fd, "POST /v1/completions HTTP/1.1\r\nHost: str"));
  Socket half_body(connect_tcp(server_->port()));
  ASSERT_GE(half_body.fd, 0);
  ASSERT_TRUE(send_all(half_body.fd, half_a_body()));

  // Meanwhile others are served.
  Reply health = ask(connect_unix(server_->socket_path()), get("/health", "strata"));
  EXPECT_EQ(health.status, 200) << health.raw;
  Reply completion = ask(connect_tcp(server_->port()),
                         post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})",
                              tcp_host(*server_)));
  EXPECT_EQ(completion.status, 200) << completion.raw;

  std::string said;
  EXPECT_LT(time_to_close(half_body.fd, said, 6s), 5s) << "a stalled body was not ended";
  expect_nothing_or_408(said);
  EXPECT_LT(time_to_close(half_headers.fd, said, 6s), 5s)
      << "half a request's headers kept the connection open past --request-timeout-seconds 1";
  expect_nothing_or_408(said);

  EXPECT_TRUE(server_->running());
  Reply after = ask(connect_unix(server_->socket_path()), get("/health", "strata"));
  EXPECT_EQ(after.status, 200) << after.raw;
  EXPECT_EQ(server_->log().find("connection failed"), std::string::npos) << server_->log();
}

// The server means to answer a body that stops coming with 408
// (HttpServer::read_request); the client must be able to read it.
TEST_F(ServeTimeoutTest, AStalledBodyIsAnswered408) {
  Socket half_body(connect_tcp(server_->port()));
  ASSERT_GE(half_body.fd, 0);
  ASSERT_TRUE(send_all(half_body.fd, half_a_body()));
  std::string said;
  EXPECT_LT(time_to_close(half_body.fd, said, 6s), 5s);
  std::optional<Reply> reply = take_reply(said, true);
  ASSERT_TRUE(reply.has_value()) << "closed without an answer";
  EXPECT_EQ(reply->status, 408) << reply->raw;
  EXPECT_FALSE(error_of(*reply).is_null()) << reply->body;
}

TEST(ServeIdleTest, AnIdleKeepAliveConnectionIsClosed) {
  ServeProcess server(tiny_serve_model(), {"--idle-timeout-seconds", "1"});
  Socket connection(connect_unix(server.socket_path()));
  ASSERT_GE(connection.fd, 0);
  ASSERT_TRUE(send_all(connection.fd, "GET /health HTTP/1.1\r\nHost: strata\r\n\r\n"));
  std::string buffer;
  std::optional<Reply> reply = read_reply(connection.fd, buffer);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 200);
  EXPECT_NE(lower(reply->header("connection").value_or("")), "close");

  std::string said;
  const auto closed_after = time_to_close(connection.fd, said, 10s);
  EXPECT_GE(closed_after, 500ms);  // kept alive a while, as asked
  EXPECT_LT(closed_after, 4s);
  EXPECT_TRUE(said.empty()) << said;  // nothing to say to an idle client
}

// ---- The API key ------------------------------------------------------------------

TEST(ServeApiKeyTest, TcpNeedsTheKeyAndTheUnixSocketDoesNot) {
  ServeProcess server(tiny_serve_model(), {"--api-key", "sk-test"});
  ASSERT_GT(server.port(), 0) << server.log();
  const std::string host = tcp_host(server);
  const std::string models = "/v1/models";

  struct Case {
    const char* name;
    std::string authorization;  // the header line, or ""
    int status;
  };
  const std::vector<Case> cases = {
      {"no key", "", 401},
      {"wrong key", "Authorization: Bearer sk-wrong\r\n", 401},
      {"key prefix", "Authorization: Bearer sk-tes\r\n", 401},
      {"key plus more", "Authorization: Bearer sk-test2\r\n", 401},
      {"not bearer", "Authorization: Basic sk-test\r\n", 401},
      {"bare key", "Authorization: sk-test\r\n", 401},
      {"right key", "Authorization: Bearer sk-test\r\n", 200},
      {"scheme in lower case", "Authorization: bearer sk-test\r\n", 200},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Reply reply = ask(connect_tcp(server.port()), get(models, host, c.authorization));
    EXPECT_EQ(reply.status, c.status) << reply.raw;
    if (c.status == 401) {
      json error = error_of(reply);
      ASSERT_FALSE(error.is_null()) << reply.body;
      EXPECT_EQ(error["code"], "invalid_api_key");
      EXPECT_EQ(error["type"], "invalid_request_error");
      EXPECT_EQ(reply.body.find("sk-test"), std::string::npos) << "the key leaks: " << reply.body;
    }
  }

  // A generation without the key is refused before it runs.
  Reply generation = ask(connect_tcp(server.port()),
                         post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})", host));
  EXPECT_EQ(generation.status, 401) << generation.raw;
  Reply with_key = ask(connect_tcp(server.port()),
                       post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})", host,
                            "Authorization: Bearer sk-test\r\n"));
  EXPECT_EQ(with_key.status, 200) << with_key.raw;

  // The Unix socket is trusted; /health is for probes.
  EXPECT_EQ(ask(connect_unix(server.socket_path()), get(models, "strata")).status, 200);
  EXPECT_EQ(ask(connect_unix(server.socket_path()),
                post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})", "strata"))
                .status,
            200);
  EXPECT_EQ(ask(connect_tcp(server.port()), get("/health", host)).status, 200);

  // And with curl, as a user would.
  CommandResult r = curl("-H 'Authorization: Bearer sk-test' " + server.base_url() + models);
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  EXPECT_EQ(json::parse(r.output)["object"], "list");
  EXPECT_EQ(server.log().find("sk-test"), std::string::npos) << "the key is in the log";
}

TEST(ServeApiKeyTest, ANonLoopbackHostWithoutAKeyDoesNotStart) {
  ServeProcess server(tiny_serve_model(), {"--host", "0.0.0.0"}, {}, /*wait_ready=*/false);
  const int code = server.wait_exit(60s);
  EXPECT_NE(code, 0);
  EXPECT_NE(code, -1) << "still running, or killed by a signal";
  const std::string log = server.log();
  EXPECT_NE(log.find("api-key"), std::string::npos) << log;
  EXPECT_EQ(log.find("ready: serving"), std::string::npos) << log;
}

// ---- CORS ---------------------------------------------------------------------------

TEST(ServeCorsTest, NoOriginIsAllowedByDefault) {
  ServeProcess server(tiny_serve_model());
  const std::string host = tcp_host(server);
  Reply reply = ask(connect_tcp(server.port()),
                    get("/v1/models", host, "Origin: http://evil.example\r\n"));
  EXPECT_EQ(reply.status, 200) << reply.raw;
  EXPECT_FALSE(reply.header("access-control-allow-origin").has_value()) << reply.raw;

  Reply preflight = ask(connect_tcp(server.port()),
                        "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: " + host +
                            "\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: "
                            "POST\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(preflight.status, 403) << preflight.raw;
  EXPECT_FALSE(preflight.header("access-control-allow-origin").has_value()) << preflight.raw;
  EXPECT_FALSE(preflight.header("access-control-allow-methods").has_value()) << preflight.raw;
}

TEST(ServeCorsTest, AConfiguredOriginIsAllowed) {
  ServeProcess server(tiny_serve_model(), {"--cors-origins", "http://localhost:3000"});
  const std::string host = tcp_host(server);
  const std::string origin = "Origin: http://localhost:3000\r\n";

  Reply reply = ask(connect_tcp(server.port()), get("/v1/models", host, origin));
  EXPECT_EQ(reply.status, 200) << reply.raw;
  EXPECT_EQ(reply.header("access-control-allow-origin"), "http://localhost:3000") << reply.raw;
  EXPECT_EQ(reply.header("vary"), "Origin") << reply.raw;

  // An error answer is readable by the page too.
  Reply error = ask(connect_tcp(server.port()), post("/v1/chat/completions", "{", host, origin));
  EXPECT_EQ(error.status, 400) << error.raw;
  EXPECT_EQ(error.header("access-control-allow-origin"), "http://localhost:3000") << error.raw;

  // A streamed answer too.
  Reply stream = ask(connect_tcp(server.port()),
                     post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2, "stream": true})",
                          host, origin));
  EXPECT_EQ(stream.status, 200) << stream.raw;
  EXPECT_EQ(stream.header("access-control-allow-origin"), "http://localhost:3000") << stream.raw;

  Reply preflight = ask(connect_tcp(server.port()),
                        "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: " + host + "\r\n" +
                            origin +
                            "Access-Control-Request-Method: POST\r\n"
                            "Access-Control-Request-Headers: authorization, content-type\r\n"
                            "Connection: close\r\n\r\n");
  EXPECT_EQ(preflight.status, 204) << preflight.raw;
  EXPECT_EQ(preflight.header("access-control-allow-origin"), "http://localhost:3000")
      << preflight.raw;
  const std::string methods = preflight.header("access-control-allow-methods").value_or("");
  EXPECT_NE(methods.find("POST"), std::string::npos) << preflight.raw;
  EXPECT_NE(
      lower(preflight.header("access-control-allow-headers").value_or("")).find("authorization"),
      std::string::npos)
      << preflight.raw;

  // Another origin is not.
  Reply other = ask(connect_tcp(server.port()),
                    get("/v1/models", host, "Origin: http://evil.example\r\n"));
  EXPECT_EQ(other.status, 200) << other.raw;
  EXPECT_FALSE(other.header("access-control-allow-origin").has_value()) << other.raw;
  // Nor one that only starts like the allowed one.
  Reply lookalike = ask(connect_tcp(server.port()),
                        get("/v1/models", host, "Origin: http://localhost:30000\r\n"));
  EXPECT_FALSE(lookalike.header("access-control-allow-origin").has_value()) << lookalike.raw;

  // With curl, as a browser's request looks.
  CommandResult r = curl("-i -H 'Origin: http://localhost:3000' " + server.base_url() + "/health");
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  EXPECT_NE(lower(r.output).find("access-control-allow-origin: http://localhost:3000"),
            std::string::npos)
      << r.output;
}

// ---- Keep-alive and Expect: 100-continue ------------------------------------------

class ServeConnectionTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServeProcess(tiny_serve_model()); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static ServeProcess* server_;
};

ServeProcess* ServeConnectionTest::server_ = nullptr;

TEST_F(ServeConnectionTest, CurlReusesTheConnection) {
  {
    SCOPED_TRACE("unix");
    CommandResult r = curl("-v --unix-socket " + server_->socket_path() +
                           " http://strata/health http://strata/v1/models");
    ASSERT_EQ(r.exit_code, 0) << r.errors;
    EXPECT_NE(r.errors.find("Re-using existing connection"), std::string::npos) << r.errors;
    EXPECT_NE(r.output.find("\"status\":\"ok\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\"object\":\"list\""), std::string::npos) << r.output;
  }
  {
    SCOPED_TRACE("tcp");
    CommandResult r = curl("-v " + server_->base_url() + "/health " + server_->base_url() +
                           "/v1/models");
    ASSERT_EQ(r.exit_code, 0) << r.errors;
    EXPECT_NE(r.errors.find("Re-using existing connection"), std::string::npos) << r.errors;
    EXPECT_NE(r.output.find("\"object\":\"list\""), std::string::npos) << r.output;
  }
}

TEST_F(ServeConnectionTest, SeveralRequestsOnOneSocket) {
  Socket connection(connect_tcp(server_->port()));
  ASSERT_GE(connection.fd, 0);
  const std::string host = tcp_host(*server_);
  std::string buffer;
  // One after another, a generation (whole and streamed) between them.
  const std::vector<std::string> requests = {
      "GET /health HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
      "POST /v1/completions HTTP/1.1\r\nHost: " + host +
          "\r\nContent-Length: 33\r\n\r\n{\"prompt\": \"Hi\", \"max_tokens\": 2}",
      "POST /v1/completions HTTP/1.1\r\nHost: " + host +
          "\r\nContent-Length: 49\r\n\r\n{\"prompt\": \"Hi\", \"max_tokens\": 2, \"stream\": true}",
      "GET /v1/models HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
  };
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(send_all(connection.fd, requests[i]));
    std::optional<Reply> reply = read_reply(connection.fd, buffer);
    ASSERT_TRUE(reply.has_value()) << buffer;
    EXPECT_EQ(reply->status, 200) << reply->raw;
  }
  // Pipelined: two requests in one write, two answers in order.
  ASSERT_TRUE(send_all(connection.fd, requests[0] + requests[3]));
  std::optional<Reply> first = read_reply(connection.fd, buffer);
  std::optional<Reply> second = read_reply(connection.fd, buffer);
  ASSERT_TRUE(first && second) << buffer;
  EXPECT_NE(first->body.find("\"status\""), std::string::npos) << first->body;
  EXPECT_NE(second->body.find("\"object\":\"list\""), std::string::npos) << second->body;
}

TEST_F(ServeConnectionTest, ExpectContinueWithA2KbBody) {
  const std::string file = server_->folder() + "/two-kb.json";
  write_file(file, completion_body_of_size(2048));
  for (const std::string& target :
       {"--unix-socket " + server_->socket_path() + " http://strata/v1/completions",
        server_->base_url() + "/v1/completions"}) {
    SCOPED_TRACE(target);
    CommandResult r = curl("-v -H 'Expect: 100-continue' -H 'Content-Type: application/json' "
                           "--data-binary @" + file + " " + target);
    ASSERT_EQ(r.exit_code, 0) << r.errors;
    EXPECT_NE(r.errors.find("HTTP/1.1 100 Continue"), std::string::npos) << r.errors;
    EXPECT_NE(r.errors.find("HTTP/1.1 200"), std::string::npos) << r.errors;
    EXPECT_EQ(json::parse(r.output)["object"], "text_completion") << r.output;
  }
}

}  // namespace
