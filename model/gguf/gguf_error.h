// GgufError: a malformed GGUF file. Carries the problem and the byte offset in
// the file where it was found; what() reads
// "gguf: tensor 'x' data [1000, 5000) lies outside the file (size 4096) at offset 123".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace strata {

class GgufError : public std::runtime_error {
 public:
  GgufError(const std::string& problem, uint64_t offset);
  const std::string& problem() const { return problem_; }
  uint64_t offset() const { return offset_; }

 private:
  std::string problem_;
  uint64_t offset_;
};

}  // namespace strata
