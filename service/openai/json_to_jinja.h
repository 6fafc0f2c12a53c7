// Request JSON as the chat template's values: what Python's json.loads would hand
// transformers. Objects keep their keys in the order sent; integers stay integers and
// other numbers are floats, as in Python.
//
// Pure function: any thread.
#pragma once

#include "model/chat/jinja/jinja_value.h"
#include "service/openai/json_fields.h"

namespace strata::openai {

jinja::Value json_to_jinja(const Json& json);

}  // namespace strata::openai
