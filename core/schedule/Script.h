// The schedule script: the Python subset tvm.tir.Schedule users write, parsed and applied line by
// line.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/schedule/Value.h"
#include "core/support/Span.h"
#include "core/tir/Expr.h"
#include "core/tir/Function.h"

namespace loom::tir {

class Schedule;

/// A script expression (the parser's AST).
struct ScriptExpr {
  enum class Kind {
    Name,
    Int,
    Float,
    String,
    None,
    Bool,
    List,
    Tuple,
    Call,
    Attribute,
    Subscript,
    Lambda,
    BinOp,
    Neg,
    Star ///< `*loops` in a call's arguments: the list's items as separate arguments
  };
  Kind kind = Kind::None;
  Span span;
  std::string text;      ///< Name / String / Attribute name / BinOp operator
  int64_t intValue = 0;  ///< Int, Bool
  double floatValue = 0; ///< Float
  std::vector<std::shared_ptr<ScriptExpr>> items; ///< List/Tuple items, Call args, operands
  std::vector<std::pair<std::string, std::shared_ptr<ScriptExpr>>> kwargs; ///< Call keyword args
  std::vector<std::string> params;                                         ///< Lambda parameters
  /// The expression as Python text.
  std::string str() const;
};
using ScriptExprPtr = std::shared_ptr<ScriptExpr>;

/// `lambda i, j: (j, i)`: the index maps of layout primitives, kept as an AST.
struct ScriptLambda {
  std::vector<std::string> params;
  ScriptExprPtr body;
  std::string str() const;
  /// The body with each parameter bound to `args[k]`, as TIR expressions (a tuple body gives
  /// several, a single expression one). Supports ints, + - * // % and unary minus, parentheses.
  /// Throws TypeError naming the unsupported construct.
  std::vector<Expr> apply(const std::vector<Expr>& args) const;
};

/// One statement: `targets = value` (targets empty for a bare call).
struct ScriptStmt {
  std::vector<std::string> targets;
  std::vector<Span> targetSpans;
  bool unpack = false; ///< `a, b = ...` (or `(a,) = ...`) rather than `a = ...`
  ScriptExprPtr value;
  Span span;
};

/// Parses a whole script; throws ParseError at the first syntax error (line:col in its span).
std::vector<ScriptStmt> parseScript(const std::string& text, const std::string& fileName = {});
/// Parses one expression (used for lambdas stored in traces).
ScriptExprPtr parseScriptExpr(const std::string& text);

/// The outcome of running a script. On failure `message` is `LINE:COL: error: ...` (with the
/// file name first when one was given), `span` the offending place, `funcBefore` the function
/// as it was just before the failing line (earlier lines stay applied to the schedule).
struct ScriptResult {
  bool ok = true;
  std::string message;
  std::string error;     ///< the message alone, without the location
  std::string errorKind; ///< the error class name ("ParseError", "NotSingleChildError", ...)
  std::string detail;    ///< the error's detailed message (with IR for schedule errors)
  Span span;
  int linesApplied = 0; ///< statements applied successfully
  PrimFunc funcBefore;
};

/// Applies `text` to `sch` statement by statement; stops at the first failing statement. Never
/// throws on bad input. The name `sch` is the schedule; other names are script variables.
ScriptResult runScript(Schedule& sch, const std::string& text, const std::string& fileName = {});

} // namespace loom::tir
