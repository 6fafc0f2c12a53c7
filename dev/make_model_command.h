// strata-dev make-model: writes a model of any supported architecture and
// shape with seeded random weights and a real tokenizer, for tests and
// benchmarks. The defaults give a tiny model that runs fast on 2 CPU cores.
#pragma once

#include <CLI/CLI.hpp>

namespace strata {

void add_make_model_command(CLI::App& app);

}  // namespace strata
