// What the reply parser needs to know of an offered tool: where a family writes
// argument values as raw text (Qwen3-Coder's <parameter=p>value</parameter>), the
// parameter's JSON Schema type decides how the text becomes JSON.
#pragma once

#include <map>
#include <string>

namespace strata {

// A parameter's JSON Schema "type"; kUnknown where the schema gives none (or several).
enum class ParameterType { kString, kInteger, kNumber, kBoolean, kObject, kArray, kNull, kUnknown };

struct ToolSignature {
  std::string name;
  // Parameter name -> type, from the tool's "parameters"."properties".
  std::map<std::string, ParameterType, std::less<>> parameters;
};

// Offered tools by name.
using ToolSignatures = std::map<std::string, ToolSignature, std::less<>>;

}  // namespace strata
