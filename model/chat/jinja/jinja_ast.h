// The parsed template: a tree of statements holding expressions, built once by the parser
// and only read by renders (so many threads may render one tree at once).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

// A filter: `subject | name(args)`. Throws RenderError on bad arguments.
using FilterFunction = Value (*)(const Value& subject, const CallArgs& args);
// A test: `subject is name(args)`.
using TestFunction = bool (*)(const Value& subject, const CallArgs& args);

enum class ExprKind {
  kConstant,     // constant
  kName,         // name
  kList,         // operands: the items
  kTuple,        // operands: the items
  kDict,         // operands: key, value, key, value, ...
  kAttribute,    // operands[0].name
  kSubscript,    // operands[0][operands[1]]
  kSlice,        // operands: start, stop, step (each may be null); only inside kSubscript
  kCall,         // operands[0](operands[1..], keywords)
  kFilter,       // operands[0] | name(operands[1..], keywords); operands[0] null in a filter block
  kTest,         // operands[0] is name(operands[1..], keywords)
  kNot,          // not operands[0]
  kNegate,       // -operands[0]
  kPositive,     // +operands[0]
  kBinary,       // operands[0] binary_op operands[1]
  kConcat,       // operands[0] ~ operands[1]
  kCompare,      // operands[0] compare_ops[0] operands[1] compare_ops[1] ... (chained)
  kAnd,          // operands[0] and operands[1]
  kOr,           // operands[0] or operands[1]
  kConditional,  // operands[1] if operands[0] else operands[2] (operands[2] may be null)
};

enum class BinaryOp { kAdd, kSubtract, kMultiply, kDivide, kFloorDivide, kModulo, kPower };
enum class CompareOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kIn, kNotIn };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::kConstant;
  int line = 0;
  Value constant;
  std::string name;  // variable, attribute, filter or test name
  BinaryOp binary_op = BinaryOp::kAdd;
  std::vector<CompareOp> compare_ops;
  std::vector<ExprPtr> operands;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  FilterFunction filter = nullptr;  // kFilter, resolved when parsed
  TestFunction test = nullptr;      // kTest, resolved when parsed
};

enum class StmtKind {
  kText,         // text
  kPrint,        // {{ expr }}
  kIf,           // branches, else_body
  kFor,          // for targets in expr [if condition]: body [else: else_body]
  kSet,          // set targets = expr, or set targets[0].attribute = expr
  kSetBlock,     // set targets[0] (or targets[0].attribute) to the rendered body
  kMacro,        // macro text(params): body
  kCallBlock,    // call(params) expr: body (the body becomes `caller`)
  kFilterBlock,  // filter filters: body
  kBreak,
  kContinue,
  kGeneration,   // transformers' {% generation %}: renders its body
};

struct Param {
  std::string name;
  ExprPtr default_value;  // null: required
};

struct Stmt;

struct Branch {
  ExprPtr condition;
  std::vector<Stmt> body;
};

struct Stmt {
  StmtKind kind = StmtKind::kText;
  int line = 0;
  std::string text;  // kText: the text; kMacro: the macro's name
  ExprPtr expr;
  ExprPtr condition;  // kFor: the `if` clause, or null
  std::vector<std::string> targets;
  std::string attribute;  // kSet, kSetBlock: set targets[0].attribute (a namespace)
  std::vector<Param> params;
  std::vector<ExprPtr> filters;  // kFilterBlock: kFilter nodes with a null subject
  std::vector<Branch> branches;
  std::vector<Stmt> body;
  std::vector<Stmt> else_body;
  // kMacro: the body reads varargs / kwargs / caller, so the macro accepts extra
  // positional arguments / extra keyword arguments / a caller (as Jinja2 decides).
  bool uses_varargs = false;
  bool uses_kwargs = false;
  bool uses_caller = false;
};

}  // namespace strata::jinja
