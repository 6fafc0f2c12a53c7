// libFuzzer target for the GGUF reader: any input must parse (and then keep
// every promise of GgufFile) or be rejected with a GgufError. Anything else,
// a crash, a sanitizer report, another exception, or a broken promise, is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "model/gguf/gguf_file.h"
#include "tests/fuzz/gguf_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const strata::GgufFile file = strata::GgufFile::parse(bytes);
    std::string violation = strata::gguf_invariant_violation(file, bytes);
    if (!violation.empty()) {
      std::fprintf(stderr, "parsed GGUF breaks a promise: %s\n", violation.c_str());
      std::abort();
    }
  } catch (const strata::GgufError&) {
    // A malformed file, rejected as it should be.
  }
  return 0;
}
