#include "common/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace strata {
namespace {

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("strata_mapped_file_test_" + name);
}

TEST(MappedFileTest, MapsWholeFileContents) {
  std::filesystem::path path = temp_path("contents");
  {
    std::ofstream out(path, std::ios::binary);
    out << "hello, map";
  }
  MappedFile file = MappedFile::open_read_only(path.string());
  ASSERT_EQ(file.bytes().size(), 10u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.bytes().data()), 10), "hello, map");

  MappedFile moved = std::move(file);
  EXPECT_EQ(moved.bytes().size(), 10u);
  EXPECT_EQ(file.bytes().size(), 0u);  // NOLINT: moved-from is empty by contract
  std::filesystem::remove(path);
}

TEST(MappedFileTest, EmptyFileMapsToEmptySpan) {
  std::filesystem::path path = temp_path("empty");
  { std::ofstream out(path, std::ios::binary); }
  MappedFile file = MappedFile::open_read_only(path.string());
  EXPECT_TRUE(file.bytes().empty());
  std::filesystem::remove(path);
}

TEST(MappedFileTest, MissingFileAndDirectoryThrowWithPath) {
  try {
    MappedFile::open_read_only("/nonexistent/strata.gguf");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/strata.gguf"), std::string::npos);
  }
  EXPECT_THROW(MappedFile::open_read_only(std::filesystem::temp_directory_path().string()),
               std::runtime_error);
}

}  // namespace
}  // namespace strata
