// The text form of TIR: prints PrimFuncs, modules, expressions and statements as TVMScript.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/tir/Function.h"

namespace loom::tir {

/// Lines of printed text, 1-based and inclusive.
struct LineRange {
  int first = 0, last = 0;
  bool valid() const { return first > 0; }
};

/// Printed text plus, for every statement node, the lines it became (BlockRealize and its Block
/// share their lines; a T.grid line belongs to every loop it stands for).
struct PrintResult {
  std::string text;
  std::vector<std::pair<Stmt, LineRange>> stmtLines;  ///< in print order
  /// The lines of `s`, or an invalid range when `s` was not printed.
  LineRange linesOf(const Stmt& s) const;
};

std::string printFunc(const PrimFunc& f);
std::string printModule(const IRModule& m);
std::string printExpr(const Expr& e);
std::string printStmt(const Stmt& s);
PrintResult printWithMap(const PrimFunc& f);

/// The shortest text of a float that parses back bit-exactly ("0", "0.5", "1e+20", "inf").
std::string formatFloat(double v);

}  // namespace loom::tir
