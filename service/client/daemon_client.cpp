#include "service/client/daemon_client.h"

#include <sys/socket.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <optional>
#include <utility>

#include "common/str_cat.h"
#include "service/client/sse_parser.h"

namespace strata {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Socket = asio::local::stream_protocol::socket;
using Request = http::request<http::string_body>;
using HeaderParser = http::response_parser<http::empty_body>;

// Larger than any JSON answer strata gives: a long completion with logprobs is a few MiB.
constexpr size_t kMaxJsonBodyBytes = 64 << 20;
// How much of a streamed body one read takes at most.
constexpr size_t kStreamReadBytes = 16 << 10;
// How much of an unexpected body an error message quotes.
constexpr size_t kExcerptBytes = 200;

Request make_request(http::verb verb, std::string_view path, std::string body) {
  Request request{verb, path, 11};
  request.set(http::field::host, "localhost");
  request.set(http::field::user_agent, "strata/" STRATA_VERSION);
  if (verb == http::verb::post) {
    request.set(http::field::content_type, "application/json");
    request.body() = std::move(body);
    request.prepare_payload();
  }
  return request;
}

std::string_view excerpt(std::string_view body) { return body.substr(0, kExcerptBytes); }

// The message of OpenAI's {"error": {"message": ...}}, when `body` is one.
std::optional<std::string> error_message(const nlohmann::json& body) {
  if (!body.is_object() || !body.contains("error")) return std::nullopt;
  const nlohmann::json& error = body["error"];
  if (error.is_object() && error.contains("message") && error["message"].is_string()) {
    return error["message"].get<std::string>();
  }
  return error.is_string() ? error.get<std::string>() : error.dump();
}

DaemonError error_from_response(const http::response<http::string_body>& response) {
  const int status = static_cast<int>(response.result_int());
  nlohmann::json body = nlohmann::json::parse(response.body(), nullptr, false);
  if (body.is_discarded()) body = nullptr;
  if (auto message = error_message(body)) return DaemonError(*message, status, std::move(body));
  return DaemonError(str_cat("strata answered HTTP ", status, " ", response.reason(),
                             response.body().empty() ? "" : ": ", excerpt(response.body())),
                     status, std::move(body));
}

// One event of a stream: a chunk, or the server's error.
nlohmann::json parse_event(const std::string& data, int status) {
  nlohmann::json event = nlohmann::json::parse(data, nullptr, false);
  if (event.is_discarded()) {
    throw DaemonError(str_cat("strata sent an event that is not JSON: ", excerpt(data)), status);
  }
  if (auto message = error_message(event)) throw DaemonError(*message, status, std::move(event));
  return event;
}

// What a connection kept from an earlier call shows when the server closed it while idle.
bool closed_while_idle(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

}  // namespace

struct DaemonClient::Impl {
  explicit Impl(std::string path) : socket_path(std::move(path)) {}

  void connect();
  void close();
  void send(const Request& request, std::optional<HeaderParser>& header);
  http::response<http::string_body> read_body(HeaderParser& header);
  nlohmann::json exchange(const Request& request);
  void read_events(HeaderParser& header, const ChunkHandler& on_chunk);
  void begin_stream();
  void end_stream(bool finished);
  bool cancelled();
  DaemonError lost_connection(const beast::error_code& ec) const {
    return DaemonError(
        str_cat("lost the connection to strata at ", socket_path, ": ", ec.message()), 0);
  }

  const std::string socket_path;
  asio::io_context io;
  Socket socket{io};              // open between calls while the server keeps it alive
  beast::flat_buffer buffer;      // bytes read past the end of the last response
  std::mutex mutex;               // orders the socket's open and close with cancel()
  bool stream_in_flight = false;  // guarded by mutex
  bool stream_cancelled = false;  // guarded by mutex
};

void DaemonClient::Impl::connect() {
  beast::error_code ec;
  try {
    Socket fresh(io);
    fresh.connect(asio::local::stream_protocol::endpoint(socket_path), ec);
    if (!ec) {
      std::lock_guard lock(mutex);
      socket = std::move(fresh);
      buffer.clear();
      // cancel() came between the start of the stream and now.
      if (stream_in_flight && stream_cancelled) ::shutdown(socket.native_handle(), SHUT_RDWR);
      return;
    }
  } catch (const boost::system::system_error& e) {  // a path too long for a socket
    ec = e.code();
  }
  throw DaemonError(str_cat("cannot connect to strata at ", socket_path, ": ", ec.message(),
                            " (is `strata serve` running?)"),
                    0);
}

void DaemonClient::Impl::close() {
  std::lock_guard lock(mutex);
  beast::error_code ignored;
  socket.close(ignored);
  buffer.clear();
}

// Writes the request and reads the response header. Only the calling thread opens and
// closes the socket, so it reads socket state without the lock.
void DaemonClient::Impl::send(const Request& request, std::optional<HeaderParser>& header) {
  for (;;) {
    const bool reused = socket.is_open();
    if (!reused) connect();
    header.emplace();
    beast::error_code ec;
    http::write(socket, request, ec);
    if (!ec) http::read_header(socket, buffer, *header, ec);
    if (!ec) return;
    close();
    if (!reused || !closed_while_idle(ec)) throw boost::system::system_error(ec);
  }
}

http::response<http::string_body> DaemonClient::Impl::read_body(HeaderParser& header) {
  http::response_parser<http::string_body> parser(std::move(header));
  parser.body_limit(kMaxJsonBodyBytes);
  http::read(socket, buffer, parser);
  if (!parser.keep_alive()) close();
  return parser.release();
}

nlohmann::json DaemonClient::Impl::exchange(const Request& request) {
  http::response<http::string_body> response;
  try {
    std::optional<HeaderParser> header;
    send(request, header);
    response = read_body(*header);
  } catch (const boost::system::system_error& e) {
    close();
    throw lost_connection(e.code());
  }
  if (response.result_int() / 100 != 2) throw error_from_response(response);
  nlohmann::json body = nlohmann::json::parse(response.body(), nullptr, false);
  if (body.is_discarded()) {
    throw DaemonError(str_cat("strata answered ", request.target(),
                              " with a body that is not JSON: ", excerpt(response.body())),
                      static_cast<int>(response.result_int()));
  }
  return body;
}

// Reads a server-sent event stream until [DONE], each event as soon as it arrives.
void DaemonClient::Impl::read_events(HeaderParser& header, const ChunkHandler& on_chunk) {
  const int status = static_cast<int>(header.get().result_int());
  http::response_parser<http::buffer_body> parser(std::move(header));
  parser.body_limit(boost::none);  // a stream is as long as the reply
  SseParser events;
  std::array<char, kStreamReadBytes> piece;
  while (!parser.is_done()) {
    parser.get().body().data = piece.data();
    parser.get().body().size = piece.size();
    beast::error_code ec;
    http::read_some(socket, buffer, parser, ec);
    if (ec && ec != http::error::need_buffer) throw boost::system::system_error(ec);
    const size_t n_read = piece.size() - parser.get().body().size;
    for (const std::string& data : events.feed({piece.data(), n_read})) {
      if (data == "[DONE]") {
        // The message ends right after [DONE]. Rather than wait for its last bytes,
        // drop a connection left mid-message.
        if (!parser.is_done() || !parser.keep_alive()) close();
        return;
      }
      on_chunk(parse_event(data, status));
    }
  }
  throw DaemonError("strata ended the stream before the reply was finished (no data: [DONE])",
                    status);
}

void DaemonClient::Impl::begin_stream() {
  std::lock_guard lock(mutex);
  stream_in_flight = true;
  stream_cancelled = false;
}

// Forgets the stream, and drops its connection unless the stream ended cleanly: the
// connection may be mid-message, or shut down by cancel().
void DaemonClient::Impl::end_stream(bool finished) {
  std::lock_guard lock(mutex);
  if (!finished || stream_cancelled) {
    beast::error_code ignored;
    socket.close(ignored);
    buffer.clear();
  }
  stream_in_flight = false;
  stream_cancelled = false;
}

bool DaemonClient::Impl::cancelled() {
  std::lock_guard lock(mutex);
  return stream_cancelled;
}

DaemonClient::DaemonClient(std::string socket_path)
    : impl_(std::make_unique<Impl>(std::move(socket_path))) {}

DaemonClient::~DaemonClient() = default;

const std::string& DaemonClient::socket_path() const { return impl_->socket_path; }

nlohmann::json DaemonClient::get_json(std::string_view path) {
  return impl_->exchange(make_request(http::verb::get, path, ""));
}

nlohmann::json DaemonClient::post_json(std::string_view path, const nlohmann::json& body) {
  return impl_->exchange(make_request(http::verb::post, path, body.dump()));
}

StreamEnd DaemonClient::post_stream(std::string_view path, const nlohmann::json& body,
                                    const ChunkHandler& on_chunk) {
  Request request = make_request(http::verb::post, path, body.dump());
  request.set(http::field::accept, "text/event-stream");
  impl_->begin_stream();
  bool finished = false;
  struct EndStream {  // however post_stream leaves
    Impl& impl;
    const bool& finished;
    ~EndStream() { impl.end_stream(finished); }
  } end_stream{*impl_, finished};

  try {
    std::optional<HeaderParser> header;
    impl_->send(request, header);
    if (header->get().result_int() / 100 != 2) throw error_from_response(impl_->read_body(*header));
    impl_->read_events(*header, on_chunk);
    finished = true;
    return StreamEnd::kDone;
  } catch (const boost::system::system_error& e) {
    if (impl_->cancelled()) return StreamEnd::kCancelled;
    throw impl_->lost_connection(e.code());
  } catch (const DaemonError&) {
    if (impl_->cancelled()) return StreamEnd::kCancelled;
    throw;
  }
}

bool DaemonClient::cancel() {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->stream_in_flight) return false;
  impl_->stream_cancelled = true;
  if (impl_->socket.is_open()) ::shutdown(impl_->socket.native_handle(), SHUT_RDWR);
  return true;
}

}  // namespace strata
