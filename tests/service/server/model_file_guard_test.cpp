#include "service/server/model_file_guard.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/mapped_file.h"
#include "common/str_cat.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// A file of `n_pages` pages of 'x' in a folder of its own, removed with the object.
class PagesFile {
 public:
  explicit PagesFile(size_t n_pages) {
    dir_ = fs::temp_directory_path() /
           str_cat("strata_model_file_guard_test_", ::getpid(), "_", next_++);
    fs::create_directories(dir_);
    std::ofstream(path()) << std::string(n_pages * kPage, 'x');
  }
  ~PagesFile() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string path() const { return (dir_ / "model.gguf").string(); }
  void truncate(size_t n_pages) const { fs::resize_file(path(), n_pages * kPage); }

 private:
  static inline int next_ = 0;
  fs::path dir_;
};

// Reads one byte the compiler cannot leave out.
int touch(const std::byte* at) {
  return static_cast<int>(*static_cast<const volatile std::byte*>(at));
}

// A handler that was there before the guard: says so and exits 42.
void previous_handler(int) {
  constexpr char kSaid[] = "the previous handler ran\n";
  if (::write(STDERR_FILENO, kSaid, sizeof kSaid - 1) < 0) _exit(43);
  _exit(42);
}

void install_previous_handler() {
  struct sigaction action {};
  action.sa_handler = previous_handler;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}

void no_core_dumps() {
  const rlimit none{.rlim_cur = 0, .rlim_max = 0};
  ::setrlimit(RLIMIT_CORE, &none);
}

TEST(ModelFileGuardTest, AReadPastTheEndOfATruncatedModelExitsNamingTheFile) {
  PagesFile file(4);
  MappedFile map = MappedFile::open_read_only(file.path());
  ModelFileGuard guard(map.bytes(), file.path());
  ASSERT_TRUE(guard.active());
  EXPECT_EQ(touch(&map.bytes()[3 * kPage]), 'x');  // intact: read as usual
  file.truncate(1);
  EXPECT_EQ(touch(&map.bytes()[0]), 'x');  // before the new end: still fine
  EXPECT_EXIT(touch(&map.bytes()[3 * kPage]), ::testing::ExitedWithCode(ModelFileGuard::kExitCode),
              "error: the model file .*/model\\.gguf changed while it was being served");
}

TEST(ModelFileGuardTest, AFaultInAnotherMappingGoesToThePreviousHandler) {
  PagesFile model(2);
  PagesFile other(2);
  MappedFile model_map = MappedFile::open_read_only(model.path());
  MappedFile other_map = MappedFile::open_read_only(other.path());
  other.truncate(0);
  EXPECT_EXIT(
      {
        install_previous_handler();
        ModelFileGuard guard(model_map.bytes(), model.path());
        touch(&other_map.bytes()[kPage]);
      },
      ::testing::ExitedWithCode(42), "the previous handler ran");
}

TEST(ModelFileGuardTest, ASigbusSentByAProcessGoesToThePreviousHandler) {
  PagesFile model(2);
  MappedFile map = MappedFile::open_read_only(model.path());
  EXPECT_EXIT(
      {
        install_previous_handler();
        ModelFileGuard guard(map.bytes(), model.path());
        ::kill(::getpid(), SIGBUS);
      },
      ::testing::ExitedWithCode(42), "the previous handler ran");
}

TEST(ModelFileGuardTest, WithoutAPreviousHandlerAnotherFaultTakesTheDefaultAction) {
  PagesFile model(2);
  PagesFile other(2);
  MappedFile model_map = MappedFile::open_read_only(model.path());
  MappedFile other_map = MappedFile::open_read_only(other.path());
  other.truncate(0);
  EXPECT_EXIT(
      {
        no_core_dumps();
        struct sigaction fallback {};
        fallback.sa_handler = SIG_DFL;
        ::sigaction(SIGBUS, &fallback, nullptr);
        ModelFileGuard guard(model_map.bytes(), model.path());
        touch(&other_map.bytes()[kPage]);
      },
      ::testing::KilledBySignal(SIGBUS), "");
}

TEST(ModelFileGuardTest, ThePreviousActionIsBackWhenTheLastGuardGoes) {
  PagesFile a(1);
  PagesFile b(1);
  MappedFile map_a = MappedFile::open_read_only(a.path());
  MappedFile map_b = MappedFile::open_read_only(b.path());
  struct sigaction before {};
  ::sigaction(SIGBUS, nullptr, &before);
  {
    ModelFileGuard first(map_a.bytes(), a.path());
    {
      ModelFileGuard second(map_b.bytes(), b.path());
      EXPECT_TRUE(second.active());
    }
    struct sigaction during {};
    ::sigaction(SIGBUS, nullptr, &during);
    EXPECT_NE(during.sa_flags & SA_SIGINFO, 0) << "the first guard's handler went with the second";
  }
  struct sigaction after {};
  ::sigaction(SIGBUS, nullptr, &after);
  EXPECT_EQ(after.sa_flags & SA_SIGINFO, before.sa_flags & SA_SIGINFO);
  if ((before.sa_flags & SA_SIGINFO) != 0) {
    EXPECT_EQ(after.sa_sigaction, before.sa_sigaction);
  } else {
    EXPECT_EQ(after.sa_handler, before.sa_handler);
  }
}

TEST(ModelFileGuardTest, GuardsBeyondTheSlotsGuardNothing) {
  PagesFile file(1);
  MappedFile map = MappedFile::open_read_only(file.path());
  std::vector<std::unique_ptr<ModelFileGuard>> guards;
  for (int i = 0; i < ModelFileGuard::kMaxGuards; ++i) {
    guards.push_back(std::make_unique<ModelFileGuard>(map.bytes(), file.path()));
    EXPECT_TRUE(guards.back()->active());
  }
  ModelFileGuard extra(map.bytes(), file.path());
  EXPECT_FALSE(extra.active());
  guards.pop_back();
  ModelFileGuard again(map.bytes(), file.path());
  EXPECT_TRUE(again.active()) << "a freed slot is not reused";
}

}  // namespace
}  // namespace strata
