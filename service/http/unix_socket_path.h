// Getting a filesystem path ready for a listening Unix socket: its folder
// made, and a socket file left behind by a server that died removed — but
// never a live server's socket, and never a file that is not a socket.
//
// Any thread (filesystem calls only).
#pragma once

#include <string>

namespace strata::http {

// Throws std::runtime_error, naming the path, when a server answers on it,
// when it names something other than a socket, when the path is too long for
// a socket address, or when its folder cannot be made.
void prepare_unix_socket_path(const std::string& path);

}  // namespace strata::http
