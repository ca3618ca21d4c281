// Shape expressions of a dynamic model ("N", "(H + 1)//2", "batch*seq"): parsed from the graph
// JSON and evaluated at the symbols' values at run time. No compiler needed: the expressions are
// the ones the compiler's type inference derived (docs/dynamic-shapes.md).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom::runtime {

/// An integer expression over named symbols: integers, names, + - * // (floor division)
/// % (floor modulo), unary minus, parentheses, min(a, b), max(a, b). Parse errors and
/// evaluation errors (an unbound symbol, division by zero) throw RuntimeFailure.
class ShapeExpr {
public:
  ShapeExpr() = default;
  explicit ShapeExpr(const std::string& text);
  /// A constant.
  static ShapeExpr constant(int64_t v);

  int64_t eval(const std::map<std::string, int64_t>& symbols) const;
  const std::string& text() const { return m_text; }
  /// The symbols it uses.
  std::vector<std::string> symbols() const;
  bool isConstant() const;

  struct Node;

private:
  std::string m_text;
  std::shared_ptr<const Node> m_root;
};

}  // namespace loom::runtime
