// MappedFile: a read-only memory map of a whole file, unmapped on destruction.
// Model weights are used straight from the map, never copied.
//
// The map follows the file: if the file is truncated while it is mapped,
// reading a page of bytes() past its new end raises SIGBUS (`strata serve`
// turns that into a clean exit naming the file: service/server/model_file_guard.h).
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace strata {

class MappedFile {
 public:
  // Throws std::runtime_error naming the path and the OS error.
  static MappedFile open_read_only(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  const std::byte* data_ = nullptr;  // nullptr for an empty file
  size_t size_ = 0;
  std::string path_;
};

}  // namespace strata
