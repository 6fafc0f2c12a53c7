#include "model/chat/jinja/jinja_template.h"

#include "model/chat/jinja/jinja_ast.h"
#include "model/chat/jinja/jinja_parser.h"
#include "model/chat/jinja/jinja_render.h"

namespace strata::jinja {

RenderTime RenderTime::now() {
  RenderTime time;
  const std::time_t seconds = std::time(nullptr);
  localtime_r(&seconds, &time.local_time);
  return time;
}

Template::Template(std::string_view source)
    : body_(std::make_shared<const std::vector<Stmt>>(parse_template(source))) {}

std::string Template::render(const Value& variables, const RenderTime& now) const {
  if (!variables.is_dict()) throw RenderError("template variables must be a dict", 0);
  Renderer renderer(variables, now);
  return renderer.render(*body_);
}

}  // namespace strata::jinja
