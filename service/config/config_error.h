// ConfigError: a setting of `strata serve` that cannot be used, from the config file,
// the environment or the command line. The message names the source ("path:line",
// "STRATA_PORT", "--port") and says what to change; main prints it and exits before
// anything starts, so a service manager sees a start-up failure rather than a crash.
#pragma once

#include <stdexcept>

namespace strata {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace strata
