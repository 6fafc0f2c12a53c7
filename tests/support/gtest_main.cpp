// The tests' main: GoogleTest's, except that a program whose tests all passed
// but some were skipped (GTEST_SKIP: no GPU, io_uring refused, a tool missing)
// exits with kSkippedExitCode, which ctest reports as skipped
// (SKIP_RETURN_CODE in tests/CMakeLists.txt), never as passed.
#include <gtest/gtest.h>

namespace {
constexpr int kSkippedExitCode = 77;
}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  if (failed != 0) return failed;
  return testing::UnitTest::GetInstance()->skipped_test_count() > 0 ? kSkippedExitCode : 0;
}
