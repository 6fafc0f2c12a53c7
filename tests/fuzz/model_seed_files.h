// Small complete models built with GgufWriter and the dev model writer, for the
// model loader's fuzzer (tests/fuzz/corpus/model_load/ holds them, written by
// `gguf_write_seeds --models DIR`): each architecture, tokenizer family and a few
// weight types, with tiny shapes and vocabularies so that each is a few KB and a
// mutation has a fair chance of landing in the metadata and tensor infos.
#pragma once

#include <vector>

#include "tests/fuzz/gguf_seed_files.h"

namespace strata {

std::vector<GgufSeedFile> model_seed_files();

}  // namespace strata
