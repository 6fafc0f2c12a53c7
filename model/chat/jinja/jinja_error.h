// The three ways a chat template fails, told apart by type so the service can answer each
// differently: the template could not be parsed (a model's template Strata cannot run),
// the template called raise_exception (a request the template rejects, e.g. roles out of
// order), or rendering failed some other way (Jinja2's UndefinedError, TypeError, ...).
#pragma once

#include <stdexcept>
#include <string>

namespace strata::jinja {

// Any template failure. line() is the template line (1-based), 0 where unknown.
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, int line) : std::runtime_error(message), line_(line) {}
  int line() const { return line_; }

 private:
  int line_;
};

// The source is not a template this engine can run: bad syntax, or a construct (a filter,
// a test, a tag) it does not support. The message names it and ends "at line N".
class ParseError : public Error {
 public:
  using Error::Error;
};

// The template called raise_exception(message); what() is exactly that message.
class TemplateRaised : public Error {
 public:
  using Error::Error;
};

// Any other failure while rendering; what() reads as Jinja2's message where a template
// commonly triggers one ("'dict object' has no attribute 'content'").
class RenderError : public Error {
 public:
  using Error::Error;
};

}  // namespace strata::jinja
