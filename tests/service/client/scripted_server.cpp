#include "tests/service/client/scripted_server.h"

#include <unistd.h>

#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <cstdio>
#include <filesystem>

namespace strata::testing {

void write_raw(Socket& socket, const std::string& bytes) {
  boost::system::error_code ignored;
  asio::write(socket, asio::buffer(bytes), ignored);
}

std::string json_response(int status, const std::string& reason, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

const std::string kStreamHeader =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

std::string http_chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

ScriptedServer::ScriptedServer(Handler handler)
    : path_((std::filesystem::temp_directory_path() /
             ("strata_client_test_" + std::to_string(getpid()) + ".sock"))
                .string()),
      handler_(std::move(handler)) {
  std::filesystem::remove(path_);
  acceptor_.open();
  acceptor_.bind(asio::local::stream_protocol::endpoint(path_));
  acceptor_.listen();
  thread_ = std::thread([this] { serve(); });
}

ScriptedServer::~ScriptedServer() {
  stopping_ = true;
  Socket wake(io_);  // unblocks accept()
  boost::system::error_code ignored;
  wake.connect(asio::local::stream_protocol::endpoint(path_), ignored);
  thread_.join();
  std::filesystem::remove(path_);
}

void ScriptedServer::serve() {
  while (!stopping_) {
    Socket socket(io_);
    boost::system::error_code ec;
    acceptor_.accept(socket, ec);
    if (ec || stopping_) return;
    ++n_connections_;
    boost::beast::flat_buffer buffer;
    for (;;) {
      Request request;
      http::read(socket, buffer, request, ec);
      if (ec) break;
      requests_.push_back(request);
      if (!handler_(request, socket)) break;
    }
  }
}

}  // namespace strata::testing
