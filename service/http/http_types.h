// The Asio and Beast types the HTTP layer shares. One stream type serves both
// the Unix socket and TCP (a generic stream socket), so sessions, handlers and
// tests have a single code path whichever listener a client came through.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/http.hpp>

namespace strata::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

using Stream = beast::basic_stream<asio::generic::stream_protocol>;
using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;
using Status = bhttp::status;
template <class T>
using Awaitable = asio::awaitable<T>;

}  // namespace strata::http
