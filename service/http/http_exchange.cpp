#include "service/http/http_exchange.h"

#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace strata::http {
namespace {

constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);

// What a readable socket means while a response is under way.
enum class PeerState { kStillThere, kSentData, kGone };

PeerState peek_peer(int fd) {
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return PeerState::kSentData;
  if (n == 0) return PeerState::kGone;  // orderly shutdown
  return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? PeerState::kStillThere
                                                                      : PeerState::kGone;
}

}  // namespace

HttpExchange::HttpExchange(Stream& stream, const Request& request, bool trusted,
                           std::chrono::seconds write_timeout, Clock::time_point received)
    : stream_(stream),
      request_(request),
      trusted_(trusted),
      write_timeout_(write_timeout),
      received_(received) {}

std::string_view HttpExchange::path() const {
  std::string_view target = request_.target();
  return target.substr(0, target.find('?'));
}

void HttpExchange::add_header(bhttp::field field, std::string value) {
  headers_.emplace_back(field, std::move(value));
}

template <class Body>
void HttpExchange::prepare(bhttp::response<Body>& head) {
  head.version(request_.version());
  head.set(bhttp::field::server, "strata");
  for (const auto& [field, value] : headers_) head.set(field, value);
  head.keep_alive(keep_alive());
  status_sent_ = static_cast<int>(head.result_int());
}

Awaitable<bool> HttpExchange::write_buffers(auto&& buffers) {
  if (broken_) co_return false;
  stream_.expires_after(write_timeout_);
  auto [error, n] = co_await asio::async_write(stream_, buffers, kAsTuple);
  stream_.expires_never();
  if (error) broken_ = true;
  co_return !broken_;
}

Awaitable<bool> HttpExchange::respond(Response response) {
  prepare(response);
  response.prepare_payload();
  if (broken_) co_return false;
  stream_.expires_after(write_timeout_);
  auto [error, n] = co_await bhttp::async_write(stream_, response, kAsTuple);
  stream_.expires_never();
  if (error) broken_ = true;
  co_return !broken_;
}

Awaitable<bool> HttpExchange::start_stream(Status status, std::string_view content_type) {
  bhttp::response<bhttp::empty_body> head{status, request_.version()};
  head.set(bhttp::field::content_type, content_type);
  head.set(bhttp::field::cache_control, "no-cache");
  head.chunked(true);
  prepare(head);
  if (broken_) co_return false;
  bhttp::response_serializer<bhttp::empty_body> serializer{head};
  stream_.expires_after(write_timeout_);
  auto [error, n] = co_await bhttp::async_write_header(stream_, serializer, kAsTuple);
  stream_.expires_never();
  if (error) broken_ = true;
  co_return !broken_;
}

Awaitable<bool> HttpExchange::write_chunk(std::string_view data) {
  if (data.empty()) co_return !broken_;  // an empty chunk would end the body
  co_return co_await write_buffers(bhttp::make_chunk(asio::buffer(data.data(), data.size())));
}

Awaitable<bool> HttpExchange::end_stream() {
  co_return co_await write_buffers(bhttp::make_chunk_last());
}

Awaitable<void> HttpExchange::client_gone() {
  auto& socket = stream_.socket();
  for (;;) {
    // An error here is a failed connection, or the race this is part of
    // cancelling it; either way the caller decides from who won the race.
    auto [error] = co_await socket.async_wait(asio::socket_base::wait_read, kAsTuple);
    if (error) co_return;
    const PeerState peer = peek_peer(socket.native_handle());
    if (peer == PeerState::kGone) co_return;
    if (peer == PeerState::kSentData) {
      // A pipelined request: the client is still there, and there is nothing
      // more to watch until this response is done.
      asio::steady_timer forever(co_await asio::this_coro::executor,
                                 asio::steady_timer::time_point::max());
      co_await forever.async_wait(kAsTuple);
      co_return;
    }
  }
}

}  // namespace strata::http
