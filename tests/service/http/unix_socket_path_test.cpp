#include "service/http/unix_socket_path.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace strata::http {
namespace {

namespace fs = std::filesystem;

// A fresh folder under /tmp with a short name: socket paths are limited to 107 bytes.
class UnixSocketPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/strata-usp-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr) << std::strerror(errno);
    dir_ = name;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::string dir_;
};

// A Unix stream socket bound at `path`; listening when `listen` is set.
int bind_socket(const std::string& path, bool listen) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0)
      << path << ": " << std::strerror(errno);
  if (listen) {
    EXPECT_EQ(::listen(fd, 4), 0);
  }
  return fd;
}

// The message of the runtime_error `f` throws; "" when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(UnixSocketPathTest, MissingFoldersAreCreated) {
  const std::string path = dir_ + "/run/strata/strata.sock";
  ASSERT_FALSE(fs::exists(dir_ + "/run"));
  prepare_unix_socket_path(path);
  EXPECT_TRUE(fs::is_directory(dir_ + "/run/strata"));
  EXPECT_FALSE(fs::exists(path)) << "only the folder is made";
  // And a socket can then be bound there.
  ::close(bind_socket(path, /*listen=*/true));
}

TEST_F(UnixSocketPathTest, NothingThereIsFine) {
  const std::string path = dir_ + "/strata.sock";
  EXPECT_NO_THROW(prepare_unix_socket_path(path));
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(UnixSocketPathTest, StaleSocketFileIsReplaced) {
  const std::string path = dir_ + "/strata.sock";
  // Bound and listened on, then closed: the file stays, nobody answers.
  ::close(bind_socket(path, /*listen=*/true));
  ASSERT_TRUE(fs::is_socket(path));
  prepare_unix_socket_path(path);
  EXPECT_FALSE(fs::exists(fs::symlink_status(path))) << "the stale file is removed";
  ::close(bind_socket(path, /*listen=*/true));  // the path can be bound again
}

TEST_F(UnixSocketPathTest, BoundButNeverListenedIsStaleToo) {
  const std::string path = dir_ + "/strata.sock";
  ::close(bind_socket(path, /*listen=*/false));
  prepare_unix_socket_path(path);
  EXPECT_FALSE(fs::exists(fs::symlink_status(path)));
}

TEST_F(UnixSocketPathTest, LiveListenerIsAnErrorNamingThePath) {
  const std::string path = dir_ + "/strata.sock";
  const int listener = bind_socket(path, /*listen=*/true);
  const std::string error = error_of([&] { prepare_unix_socket_path(path); });
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("already listening"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_socket(path)) << "a live server's socket is never removed";
  ::close(listener);
}

TEST_F(UnixSocketPathTest, RegularFileIsAnError) {
  const std::string path = dir_ + "/strata.sock";
  std::ofstream(path) << "not a socket";
  const std::string error = error_of([&] { prepare_unix_socket_path(path); });
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("not a socket"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_regular_file(path)) << "the file is left alone";
}

TEST_F(UnixSocketPathTest, DirectoryIsAnError) {
  const std::string path = dir_ + "/strata.sock";
  fs::create_directory(path);
  const std::string error = error_of([&] { prepare_unix_socket_path(path); });
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_TRUE(fs::is_directory(path));
}

TEST_F(UnixSocketPathTest, TooLongPathIsAnError) {
  const size_t max = sizeof(sockaddr_un::sun_path) - 1;  // 107 on Linux
  std::string path = dir_ + "/";
  path += std::string(max - path.size(), 's');
  ASSERT_EQ(path.size(), max);
  EXPECT_NO_THROW(prepare_unix_socket_path(path)) << "the longest path that fits";
  path += "s";
  const std::string error = error_of([&] { prepare_unix_socket_path(path); });
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("too long"), std::string::npos) << error;
}

TEST_F(UnixSocketPathTest, UncreatableFolderIsAnError) {
  // A folder under a regular file can never be made.
  std::ofstream(dir_ + "/file") << "x";
  const std::string path = dir_ + "/file/sub/strata.sock";
  const std::string error = error_of([&] { prepare_unix_socket_path(path); });
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace strata::http
