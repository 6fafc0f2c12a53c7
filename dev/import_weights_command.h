// strata-dev import-weights: writes a GGUF model from a Hugging Face Llama
// checkpoint (config.json, safetensors weights, tokenizer.json +
// tokenizer_config.json), quantized with Strata's own quantizers. How the
// bundled demo model (tools/demo-model) becomes models/strata-demo.gguf.
#pragma once

#include <CLI/CLI.hpp>

namespace strata {

// Adds the import-weights subcommand.
void add_import_weights_command(CLI::App& dev);

}  // namespace strata
