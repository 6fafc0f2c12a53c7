// DaemonClient against a scripted server on a Unix socket: keep-alive, reconnecting
// after the server closed an idle connection, error bodies, event streams split
// anywhere, cancel() from another thread, and the message when nothing listens.
#include "service/client/daemon_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/service/client/scripted_server.h"

namespace strata {
namespace {

using testing::http_chunk;
using testing::json_response;
using testing::kStreamHeader;
using testing::Request;
using testing::ScriptedServer;
using testing::Socket;
using testing::write_raw;
namespace asio = boost::asio;
namespace http = boost::beast::http;

TEST(DaemonClientTest, KeepsOneConnectionAcrossCalls) {
  ScriptedServer server([](const Request& request, Socket& socket) {
    write_raw(socket,
              json_response(200, "OK", R"({"path": ")" + std::string(request.target()) + "\"}"));
    return true;
  });
  {
    DaemonClient client(server.path());
    EXPECT_EQ(client.get_json("/v1/models")["path"], "/v1/models");
    EXPECT_EQ(client.get_json("/health")["path"], "/health");
    EXPECT_EQ(client.post_json("/v1/completions", {{"prompt", "hi"}})["path"], "/v1/completions");
  }
  EXPECT_EQ(server.n_connections(), 1);
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[2].method(), http::verb::post);
  EXPECT_EQ(requests[2][http::field::content_type], "application/json");
  EXPECT_EQ(nlohmann::json::parse(requests[2].body()), nlohmann::json({{"prompt", "hi"}}));
  EXPECT_EQ(requests[0][http::field::host], "localhost");
}

TEST(DaemonClientTest, ReconnectsWhenTheServerClosedTheIdleConnection) {
  ScriptedServer server([](const Request&, Socket& socket) {
    write_raw(socket, json_response(200, "OK", R"({"ok": true})"));
    return false;  // as a keep-alive timeout would, after the answer
  });
  {
    DaemonClient client(server.path());
    EXPECT_EQ(client.get_json("/health")["ok"], true);
    usleep(20'000);  // let the close land
    EXPECT_EQ(client.get_json("/health")["ok"], true);
    EXPECT_THROW(client.post_stream("/v1/chat/completions", {}, [](const nlohmann::json&) {}),
                 DaemonError);  // a JSON answer is not a stream: no [DONE]
  }
  EXPECT_EQ(server.n_connections(), 3);
}

TEST(DaemonClientTest, ErrorStatusCarriesTheServersMessage) {
  ScriptedServer server([](const Request& request, Socket& socket) {
    if (request.target() == "/loading") {
      write_raw(socket, json_response(503, "Service Unavailable",
                                      R"({"error": {"message": "the model is still loading",)"
                                      R"( "type": "server_error", "param": null, "code": null}})"));
    } else {
      write_raw(socket, json_response(502, "Bad Gateway", "not json"));
    }
    return true;
  });
  DaemonClient client(server.path());
  try {
    client.get_json("/loading");
    FAIL() << "no DaemonError";
  } catch (const DaemonError& e) {
    EXPECT_STREQ(e.what(), "the model is still loading");
    EXPECT_EQ(e.http_status(), 503);
  }
  try {
    client.post_stream("/other", {{"stream", true}}, [](const nlohmann::json&) {});
    FAIL() << "no DaemonError";
  } catch (const DaemonError& e) {
    EXPECT_STREQ(e.what(), "strata answered HTTP 502 Bad Gateway: not json");
    EXPECT_EQ(e.http_status(), 502);
  }
}

// The events of a chat stream, cut into HTTP chunks at awkward places.
const std::vector<std::string> kStreamPieces = {
    "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n",
    "\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\r\n\r\nda",
    "ta: {\"choices\":[{\"delta\":{}, \"finish_reason\":\"stop\"}]}\n\n: comment\n\ndata: [DO",
    "NE]\n\n",
};

TEST(DaemonClientTest, StreamsEventsUntilDone) {
  ScriptedServer server([](const Request& request, Socket& socket) {
    if (request.target() == "/health") {
      write_raw(socket, json_response(200, "OK", "{}"));
      return true;
    }
    write_raw(socket, kStreamHeader);
    for (const std::string& piece : kStreamPieces) write_raw(socket, http_chunk(piece));
    write_raw(socket, http_chunk("data: {\"after\": \"done\"}\n\n") + "0\r\n\r\n");
    return true;
  });
  DaemonClient client(server.path());
  for (int turn = 0; turn < 2; ++turn) {
    std::vector<nlohmann::json> chunks;
    StreamEnd end =
        client.post_stream("/v1/chat/completions", {{"stream", true}},
                           [&](const nlohmann::json& chunk) { chunks.push_back(chunk); });
    EXPECT_EQ(end, StreamEnd::kDone);
    ASSERT_EQ(chunks.size(), 3u);
    EXPECT_EQ(chunks[0]["choices"][0]["delta"]["content"], "Hel");
    EXPECT_EQ(chunks[1]["choices"][0]["delta"]["content"], "lo");
    EXPECT_EQ(chunks[2]["choices"][0]["finish_reason"], "stop");
  }
  EXPECT_EQ(client.get_json("/health"), nlohmann::json::object());
  EXPECT_EQ(server.requests()[0][http::field::accept], "text/event-stream");
}

TEST(DaemonClientTest, AnErrorEventOrAStreamCutShortThrows) {
  ScriptedServer server([](const Request& request, Socket& socket) {
    write_raw(socket, kStreamHeader);
    write_raw(socket, http_chunk("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"));
    if (request.target() == "/error") {
      write_raw(socket, http_chunk("data: {\"error\": {\"message\": \"the engine failed\", "
                                   "\"type\": \"server_error\"}}\n\ndata: [DONE]\n\n"));
      write_raw(socket, "0\r\n\r\n");
      return true;
    }
    write_raw(socket, "0\r\n\r\n");  // no [DONE]
    return false;
  });
  DaemonClient client(server.path());
  int n_chunks = 0;
  auto count = [&](const nlohmann::json&) { ++n_chunks; };
  try {
    client.post_stream("/error", {}, count);
    FAIL() << "no DaemonError";
  } catch (const DaemonError& e) {
    EXPECT_STREQ(e.what(), "the engine failed");
    EXPECT_EQ(e.http_status(), 200);
  }
  try {
    client.post_stream("/short", {}, count);
    FAIL() << "no DaemonError";
  } catch (const DaemonError& e) {
    EXPECT_NE(std::string(e.what()).find("no data: [DONE]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(n_chunks, 2);
}

TEST(DaemonClientTest, CancelFromAnotherThreadStopsTheStreamAndClosesTheConnection) {
  std::atomic<bool> server_saw_close{false};
  ScriptedServer server([&](const Request& request, Socket& socket) {
    if (request.target() == "/health") {
      write_raw(socket, json_response(200, "OK", "{}"));
      return true;
    }
    write_raw(socket, kStreamHeader);
    write_raw(socket, http_chunk("data: {\"n\": 1}\n\n"));
    // A reply that never ends, until the client goes away.
    char byte;
    boost::system::error_code ec;
    socket.read_some(asio::buffer(&byte, 1), ec);
    server_saw_close = ec == asio::error::eof;
    return false;
  });
  DaemonClient client(server.path());
  EXPECT_FALSE(client.cancel());  // nothing in flight
  std::atomic<bool> first_chunk{false};
  std::thread canceller([&] {
    while (!first_chunk) std::this_thread::yield();
    EXPECT_TRUE(client.cancel());
  });
  StreamEnd end = client.post_stream("/v1/chat/completions", {},
                                     [&](const nlohmann::json&) { first_chunk = true; });
  canceller.join();
  EXPECT_EQ(end, StreamEnd::kCancelled);
  EXPECT_FALSE(client.cancel());
  // The next call works, on a new connection.
  EXPECT_EQ(client.get_json("/health"), nlohmann::json::object());
  EXPECT_TRUE(server_saw_close);
  EXPECT_EQ(server.n_connections(), 2);
}

TEST(DaemonClientTest, NothingListeningSaysSo) {
  const std::string path = "/nonexistent/strata.sock";
  DaemonClient client(path);
  try {
    client.get_json("/health");
    FAIL() << "no DaemonError";
  } catch (const DaemonError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot connect to strata at /nonexistent/strata.sock: No such file or directory "
              "(is `strata serve` running?)");
    EXPECT_EQ(e.http_status(), 0);
  }
  EXPECT_THROW(client.post_stream("/v1/chat/completions", {}, [](const nlohmann::json&) {}),
               DaemonError);
}

}  // namespace
}  // namespace strata
