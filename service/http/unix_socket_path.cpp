#include "service/http/unix_socket_path.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/str_cat.h"

namespace strata::http {
namespace {

// True when a server accepts connections at `path`.
bool someone_listens(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const bool connected =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return connected;
}

}  // namespace

void prepare_unix_socket_path(const std::string& path) {
  if (path.size() + 1 > sizeof(sockaddr_un::sun_path)) {
    throw std::runtime_error(str_cat("socket path ", path, " is too long (", path.size(),
                                     " bytes; a Unix socket path has at most ",
                                     sizeof(sockaddr_un::sun_path) - 1, ")"));
  }
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!folder.empty() && !std::filesystem::exists(folder)) {
    std::filesystem::create_directories(folder, error);
    if (error) {
      throw std::runtime_error(
          str_cat("cannot create the socket folder ", folder.string(), ": ", error.message()));
    }
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;  // nothing there
  if (!S_ISSOCK(info.st_mode)) {
    throw std::runtime_error(str_cat(path, " exists and is not a socket; remove it or pick "
                                           "another path with --socket"));
  }
  if (someone_listens(path)) {
    throw std::runtime_error(str_cat("another server is already listening on ", path,
                                     "; stop it or pick another path with --socket"));
  }
  ::unlink(path.c_str());  // stale: its server is gone
}

}  // namespace strata::http
