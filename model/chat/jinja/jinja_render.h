// The interpreter: walks the statement tree for one render, holding that render's
// variables (scopes), output and `now`. One Renderer per render call, used on one thread;
// the tree it walks is shared and only read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/chat/jinja/jinja_ast.h"
#include "model/chat/jinja/jinja_template.h"
#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

class Renderer {
 public:
  Renderer(const Value& variables, const RenderTime& now) : variables_(variables), now_(now) {}

  std::string render(const std::vector<Stmt>& body);

 private:
  // Variables set in one scope: the template's top level, a for iteration, a macro call.
  // Names point into the tree, which outlives the render.
  struct Frame {
    std::vector<std::pair<std::string_view, Value>> variables;
    Frame* parent = nullptr;

    void set(std::string_view name, Value value);
  };

  enum class Flow { kNormal, kBreak, kContinue };

  // Statements (jinja_render.cpp).
  void count_step(int line);  // throws RenderError past kMaxRenderSteps
  Flow render_body(const std::vector<Stmt>& body, std::string& out);
  Flow render_statement(const Stmt& stmt, std::string& out);
  Flow render_if(const Stmt& stmt, std::string& out);
  void render_for(const Stmt& stmt, std::string& out);
  void render_set(const Stmt& stmt, Value value);
  void render_call_block(const Stmt& stmt, std::string& out);
  void render_filter_block(const Stmt& stmt, std::string& out);
  std::string render_scoped(const std::vector<Stmt>& body, Frame& frame);
  void assign_targets(Frame& frame, const std::vector<std::string>& targets, const Value& value);
  Value make_macro(const Stmt& macro);
  Value call_macro(const Stmt& macro, const CallArgs& args, const Value& caller);

  // Expressions (jinja_evaluate.cpp).
  Value evaluate(const Expr& expr);
  Value lookup(std::string_view name) const;
  Value evaluate_call(const Expr& expr);
  CallArgs evaluate_arguments(const Expr& expr, size_t first_operand);
  Value evaluate_subscript(const Expr& expr);
  Value evaluate_compare(const Expr& expr);
  Value evaluate_conditional(const Expr& expr);
  Value evaluate_collection(const Expr& expr);

  const Value& variables_;  // the caller's dict
  const RenderTime& now_;
  Frame root_;
  Frame* frame_ = &root_;  // innermost scope
  int macro_depth_ = 0;    // nested macro calls, bounded so a runaway recursion fails cleanly
  int64_t steps_ = 0;      // statements run and loop iterations, bounded (kMaxRenderSteps)
};

// A template comes from a model file, which may be hostile: a render that runs this many
// statements and loop iterations, or writes this much, fails instead of holding a thread
// or memory. Real chat templates take thousands of steps and write kilobytes.
inline constexpr int64_t kMaxRenderSteps = 5'000'000;
inline constexpr size_t kMaxRenderBytes = size_t{32} << 20;

}  // namespace strata::jinja
