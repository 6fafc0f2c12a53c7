// Valid GGUF files built with GgufWriter, deterministic and small (a few KB
// each): the starting points for the mutation test and the fuzzer's corpus.
// Together they cover versions 2 and 3, alignments 1 to 64, every metadata
// value type, nested arrays, several tensor types and up to 4 dims.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace strata {

struct GgufSeedFile {
  std::string name;  // a file name for the corpus: "v2_every_type.gguf"
  std::vector<std::byte> bytes;
};

std::vector<GgufSeedFile> gguf_seed_files();

}  // namespace strata
