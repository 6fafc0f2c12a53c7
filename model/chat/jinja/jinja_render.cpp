#include "model/chat/jinja/jinja_render.h"

#include <algorithm>
#include <memory>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_objects.h"
#include "model/chat/jinja/jinja_operators.h"
#include "model/chat/jinja/jinja_python_format.h"

namespace strata::jinja {
namespace {

// Deep enough for any real template; shallow enough that the stack never runs out.
constexpr int kMaxMacroDepth = 100;

// Sets a variable for the rest of a C++ scope and restores it on the way out, exceptions
// included: the innermost frame, the macro depth.
template <typename T>
class ScopedAssign {
 public:
  ScopedAssign(T& target, T value) : target_(target), saved_(target) { target = value; }
  ~ScopedAssign() { target_ = saved_; }
  ScopedAssign(const ScopedAssign&) = delete;
  ScopedAssign& operator=(const ScopedAssign&) = delete;

 private:
  T& target_;
  T saved_;
};

}  // namespace

void Renderer::Frame::set(std::string_view name, Value value) {
  for (auto& entry : variables) {
    if (entry.first == name) {
      entry.second = std::move(value);
      return;
    }
  }
  variables.emplace_back(name, std::move(value));
}

std::string Renderer::render(const std::vector<Stmt>& body) {
  std::string out;
  render_body(body, out);
  return out;
}

Renderer::Flow Renderer::render_body(const std::vector<Stmt>& body, std::string& out) {
  for (const Stmt& stmt : body) {
    const Flow flow = render_statement(stmt, out);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

void Renderer::count_step(int line) {
  if (++steps_ > kMaxRenderSteps) {
    throw RenderError("the template ran more than " + std::to_string(kMaxRenderSteps) +
                          " steps; it is not a chat template Strata will run",
                      line);
  }
}

Renderer::Flow Renderer::render_statement(const Stmt& stmt, std::string& out) {
  count_step(stmt.line);
  try {
    switch (stmt.kind) {
      case StmtKind::kText: out += stmt.text; break;
      case StmtKind::kPrint: append_python_str(out, evaluate(*stmt.expr)); break;
      case StmtKind::kIf: return render_if(stmt, out);
      case StmtKind::kFor: render_for(stmt, out); break;
      case StmtKind::kSet: render_set(stmt, evaluate(*stmt.expr)); break;
      case StmtKind::kSetBlock: {
        std::string captured;
        const Flow flow = render_body(stmt.body, captured);
        render_set(stmt, Value(std::move(captured)));
        return flow;
      }
      case StmtKind::kMacro: frame_->set(stmt.text, make_macro(stmt)); break;
      case StmtKind::kCallBlock: render_call_block(stmt, out); break;
      case StmtKind::kFilterBlock: render_filter_block(stmt, out); break;
      case StmtKind::kBreak: return Flow::kBreak;
      case StmtKind::kContinue: return Flow::kContinue;
      case StmtKind::kGeneration: return render_body(stmt.body, out);
    }
  } catch (const TemplateRaised& error) {
    if (error.line() != 0) throw;
    throw TemplateRaised(error.what(), stmt.line);
  } catch (const RenderError& error) {
    if (error.line() != 0) throw;
    throw RenderError(error.what(), stmt.line);
  }
  if (out.size() > kMaxRenderBytes) {
    throw RenderError("the template wrote more than " + std::to_string(kMaxRenderBytes >> 20) +
                          " MiB; it is not a chat template Strata will run",
                      stmt.line);
  }
  return Flow::kNormal;
}

Renderer::Flow Renderer::render_if(const Stmt& stmt, std::string& out) {
  for (const Branch& branch : stmt.branches) {
    if (truthy(evaluate(*branch.condition))) return render_body(branch.body, out);
  }
  return render_body(stmt.else_body, out);
}

void Renderer::assign_targets(Frame& frame, const std::vector<std::string>& targets, const Value& value) {
  if (targets.size() == 1) {
    frame.set(targets[0], value);
    return;
  }
  const ValueList items = iterate(value);
  if (items.size() != targets.size()) {
    throw RenderError(items.size() > targets.size()
                          ? "too many values to unpack (expected " + std::to_string(targets.size()) + ")"
                          : "not enough values to unpack (expected " + std::to_string(targets.size()) + ", got " +
                                std::to_string(items.size()) + ")", 0);
  }
  for (size_t i = 0; i < targets.size(); ++i) frame.set(targets[i], items[i]);
}

void Renderer::render_for(const Stmt& stmt, std::string& out) {
  ValueList all = iterate(evaluate(*stmt.expr));
  auto items = std::make_shared<ValueList>();
  Frame frame;
  frame.parent = frame_;
  ScopedAssign<Frame*> scope(frame_, &frame);
  if (stmt.condition) {  // the `if` clause filters before `loop` counts
    for (Value& item : all) {
      assign_targets(frame, stmt.targets, item);
      if (truthy(evaluate(*stmt.condition))) items->push_back(std::move(item));
    }
  } else {
    *items = std::move(all);
  }
  if (items->empty()) {
    frame.variables.clear();
    render_body(stmt.else_body, out);
    return;
  }
  auto loop = std::make_shared<LoopState>(items);
  const Value loop_value = Value::object(loop);
  for (size_t i = 0; i < items->size(); ++i) {
    count_step(stmt.line);
    frame.variables.clear();  // each iteration starts a fresh scope, as in Jinja2
    loop->set_index(i);
    frame.set("loop", loop_value);
    assign_targets(frame, stmt.targets, (*items)[i]);
    if (render_body(stmt.body, out) == Flow::kBreak) break;
  }
}

void Renderer::render_set(const Stmt& stmt, Value value) {
  if (stmt.attribute.empty()) {
    assign_targets(*frame_, stmt.targets, value);
    return;
  }
  const Value target = lookup(stmt.targets[0]);
  if (!target.is_object() || !target.as_object().set_attribute(stmt.attribute, std::move(value))) {
    throw RenderError("cannot assign attribute on non-namespace object", 0);
  }
}

std::string Renderer::render_scoped(const std::vector<Stmt>& body, Frame& frame) {
  ScopedAssign<Frame*> scope(frame_, &frame);
  std::string out;
  render_body(body, out);
  return out;
}

Value Renderer::make_macro(const Stmt& macro) {
  return Value::function(macro.text, [this, &macro](const CallArgs& args) {
    return call_macro(macro, args, Value());
  });
}

Value Renderer::call_macro(const Stmt& macro, const CallArgs& args, const Value& caller) {
  if (macro_depth_ >= kMaxMacroDepth) throw RenderError("maximum recursion depth exceeded in macro '" + macro.text + "'", 0);
  Frame frame;
  frame.parent = &root_;
  if (args.positional.size() > macro.params.size() && !macro.uses_varargs) {
    throw RenderError("macro '" + macro.text + "' takes not more than " + std::to_string(macro.params.size()) +
                          " argument(s)", 0);
  }
  ValueDict extra_keywords;
  Value caller_value = caller;
  for (const auto& [name, value] : args.keyword) {
    // An init-capture: clang before 16 cannot capture a structured binding.
    const bool is_param = std::any_of(macro.params.begin(), macro.params.end(),
                                      [&keyword = name](const Param& p) { return p.name == keyword; });
    if (is_param) continue;
    if (name == "caller") {
      if (macro.uses_caller) caller_value = value;
    } else if (macro.uses_kwargs) extra_keywords.emplace_back(name, value);
    else throw RenderError("macro '" + macro.text + "' takes no keyword argument '" + name + "'", 0);
  }
  ScopedAssign<Frame*> scope(frame_, &frame);
  ScopedAssign<int> depth(macro_depth_, macro_depth_ + 1);
  for (size_t i = 0; i < macro.params.size(); ++i) {
    const Param& param = macro.params[i];
    const auto keyword = std::find_if(args.keyword.begin(), args.keyword.end(), [&](const auto& k) { return k.first == param.name; });
    if (i < args.positional.size()) frame.set(param.name, args.positional[i]);
    else if (keyword != args.keyword.end()) frame.set(param.name, keyword->second);
    else if (param.default_value) frame.set(param.name, evaluate(*param.default_value));
    else frame.set(param.name, Value::undefined("parameter '" + param.name + "' was not provided"));
  }
  if (macro.uses_varargs) {
    ValueList rest;
    for (size_t i = macro.params.size(); i < args.positional.size(); ++i) rest.push_back(args.positional[i]);
    frame.set("varargs", Value::tuple(std::move(rest)));
  }
  if (macro.uses_kwargs) frame.set("kwargs", Value::dict(std::move(extra_keywords)));
  if (macro.uses_caller) frame.set("caller", caller_value);
  std::string out;
  render_body(macro.body, out);
  return Value(std::move(out));
}

void Renderer::render_call_block(const Stmt& stmt, std::string& out) {
  Frame* defining_frame = frame_;
  const Value caller = Value::function("caller", [this, &stmt, defining_frame](const CallArgs& args) {
    Frame frame;
    frame.parent = defining_frame;
    for (size_t i = 0; i < stmt.params.size(); ++i) {
      const Param& param = stmt.params[i];
      if (i < args.positional.size()) frame.set(param.name, args.positional[i]);
      else if (param.default_value) frame.set(param.name, evaluate(*param.default_value));
      else frame.set(param.name, Value::undefined("parameter '" + param.name + "' was not provided"));
    }
    return Value(render_scoped(stmt.body, frame));
  });
  CallArgs args = evaluate_arguments(*stmt.expr, 1);
  args.keyword.emplace_back("caller", caller);
  const Value callee = evaluate(*stmt.expr->operands[0]);
  if (callee.is_undefined()) raise_undefined(callee);
  if (!callee.is_function()) throw RenderError("'" + std::string(type_name(callee)) + "' object is not callable", 0);
  append_python_str(out, callee.as_function()(args));
}

void Renderer::render_filter_block(const Stmt& stmt, std::string& out) {
  std::string body;
  render_body(stmt.body, body);
  Value value(std::move(body));
  for (const ExprPtr& filter : stmt.filters) value = filter->filter(value, evaluate_arguments(*filter, 1));
  append_python_str(out, value);
}

}  // namespace strata::jinja
