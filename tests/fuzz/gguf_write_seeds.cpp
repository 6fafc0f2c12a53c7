// gguf_write_seeds [--models] DIR: writes GGUF seed files into DIR (created if
// missing): the GGUF reader's (gguf_seed_files.h), run by the gguf fuzzer's
// script before each run, or with --models the model loader's
// (model_seed_files.h), which tests/fuzz/corpus/model_load/ holds.
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>

#include "tests/fuzz/gguf_seed_files.h"
#include "tests/fuzz/model_seed_files.h"

int main(int argc, char** argv) {
  const bool models = argc == 3 && std::strcmp(argv[1], "--models") == 0;
  if (argc != 2 && !models) {
    std::fprintf(stderr, "usage: %s [--models] CORPUS_DIR\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::path dir(argv[argc - 1]);
    std::filesystem::create_directories(dir);
    for (const strata::GgufSeedFile& seed :
         models ? strata::model_seed_files() : strata::gguf_seed_files()) {
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
