// gguf_write_seeds DIR: writes the seed corpus for gguf_fuzzer into DIR
// (created if missing). Run by ctest as the fixture of the fuzz test.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>

#include "tests/fuzz/gguf_seed_files.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::path dir(argv[1]);
    std::filesystem::create_directories(dir);
    for (const strata::GgufSeedFile& seed : strata::gguf_seed_files()) {
      std::ofstream out(dir / seed.name, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(seed.bytes.data()),
                static_cast<std::streamsize>(seed.bytes.size()));
      if (!out) {
        std::fprintf(stderr, "cannot write %s\n", (dir / seed.name).c_str());
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
