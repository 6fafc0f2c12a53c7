// Environment: a read-only view of environment variables, passed to the config code so
// that tests give it a map instead of changing the process environment. The only place
// Strata reads the real environment is process_environment().
//
// Any thread: process_environment() only reads (nothing in Strata calls setenv).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace strata {

// The value of a variable; nullopt when it is unset (set to "" is a value).
using Environment = std::function<std::optional<std::string>(const std::string& name)>;

// getenv.
Environment process_environment();

// Exactly these variables (for tests).
Environment fixed_environment(std::map<std::string, std::string> variables);

}  // namespace strata
