// Internal: a small expression pattern matcher so rewrite rules read like `rw(x + 0, x)`.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/arith/ExprOrder.h"
#include "core/tir/Expr.h"

namespace loom::arith::pat {

using tir::BinOp;
using tir::Expr;

/// The bindings of one match attempt: wildcards x[i] and constant wildcards c[i].
struct MatchState {
  Expr x[6];
  Expr c[3];
  void reset() {
    for (auto& e : x) e = Expr();
    for (auto& e : c) e = Expr();
  }
};

/// `a op b` with both operands immediates folded to an immediate; otherwise the node.
Expr foldBinary(BinOp op, const Expr& a, const Expr& b);
/// True when `e` is a scalar integer or float immediate.
bool isConstScalar(const Expr& e);

struct PatBase {};
template <class T> concept Pattern = std::is_base_of_v<PatBase, T>;

/// A wildcard; a second occurrence must match an equal expression.
template <int I> struct PVar : PatBase {
  static constexpr bool kLiteral = false;
  bool match(const Expr& e, MatchState& s) const {
    if (s.x[I].defined()) return exprEqual(s.x[I], e);
    s.x[I] = e;
    return true;
  }
  Expr build(MatchState& s, DataType) const { return s.x[I]; }
};

/// A wildcard that matches only immediates.
template <int I> struct PConst : PatBase {
  static constexpr bool kLiteral = false;
  bool match(const Expr& e, MatchState& s) const {
    if (!isConstScalar(e)) return false;
    if (s.c[I].defined()) return exprEqual(s.c[I], e);
    s.c[I] = e;
    return true;
  }
  Expr build(MatchState& s, DataType) const { return s.c[I]; }
};

/// A literal integer: matches an immediate of that value (int or float); builds one of the
/// type of its sibling operand.
struct PLit : PatBase {
  static constexpr bool kLiteral = true;
  int64_t v;
  explicit PLit(int64_t value) : v(value) {}
  bool match(const Expr& e, MatchState&) const;
  Expr build(MatchState&, DataType t) const;
};

/// A computed result: a callable returning the replacement expression.
template <class F> struct PFunc : PatBase {
  static constexpr bool kLiteral = false;
  F f;
  explicit PFunc(F fn) : f(std::move(fn)) {}
  bool match(const Expr&, MatchState&) const { return false; }
  Expr build(MatchState&, DataType) const { return f(); }
};

template <class T> auto lift(const T& v) {
  if constexpr (Pattern<T>) return v;
  else if constexpr (std::is_invocable_v<T>) return PFunc<T>(v);
  else return PLit(int64_t(v));
}

template <BinOp Op, class A, class B> struct PBin : PatBase {
  static constexpr bool kLiteral = false;
  A a;
  B b;
  PBin(A x, B y) : a(std::move(x)), b(std::move(y)) {}
  bool match(const Expr& e, MatchState& s) const {
    auto* n = e.as<tir::BinaryNode>();
    return n && n->op == Op && a.match(n->a, s) && b.match(n->b, s);
  }
  Expr build(MatchState& s, DataType t) const {
    if constexpr (A::kLiteral) {
      Expr y = b.build(s, t);
      return foldBinary(Op, a.build(s, y.dtype()), y);
    } else {
      Expr x = a.build(s, t);
      return foldBinary(Op, x, b.build(s, x.dtype()));
    }
  }
};

Expr buildNot(const Expr& a);
Expr buildSelect(const Expr& c, const Expr& t, const Expr& f);

template <class A> struct PNot : PatBase {
  static constexpr bool kLiteral = false;
  A a;
  explicit PNot(A x) : a(std::move(x)) {}
  bool match(const Expr& e, MatchState& s) const {
    auto* n = e.as<tir::NotNode>();
    return n && a.match(n->a, s);
  }
  Expr build(MatchState& s, DataType) const { return buildNot(a.build(s, DataType::Bool())); }
};

template <class C, class T, class F> struct PSelect : PatBase {
  static constexpr bool kLiteral = false;
  C c;
  T t;
  F f;
  PSelect(C x, T y, F z) : c(std::move(x)), t(std::move(y)), f(std::move(z)) {}
  bool match(const Expr& e, MatchState& s) const {
    auto* n = e.as<tir::SelectNode>();
    return n && c.match(n->condition, s) && t.match(n->trueValue, s) && f.match(n->falseValue, s);
  }
  Expr build(MatchState& s, DataType ty) const {
    Expr tv = t.build(s, ty);
    return buildSelect(c.build(s, DataType::Bool()), tv, f.build(s, tv.dtype()));
  }
};

template <class A, class B>
concept BinOperands = (Pattern<A> || Pattern<B>) && (Pattern<A> || std::is_integral_v<A>) &&
                      (Pattern<B> || std::is_integral_v<B>);

#define LOOM_PATTERN_BINOP(NAME, OP)                                                             \
  template <class A, class B>                                                                    \
    requires BinOperands<A, B>                                                                   \
  auto NAME(const A& a, const B& b) {                                                            \
    return PBin<BinOp::OP, decltype(lift(a)), decltype(lift(b))>(lift(a), lift(b));              \
  }
LOOM_PATTERN_BINOP(operator+, Add)
LOOM_PATTERN_BINOP(operator-, Sub)
LOOM_PATTERN_BINOP(operator*, Mul)
LOOM_PATTERN_BINOP(truncdiv, Div)
LOOM_PATTERN_BINOP(truncmod, Mod)
LOOM_PATTERN_BINOP(floordiv, FloorDiv)
LOOM_PATTERN_BINOP(floormod, FloorMod)
LOOM_PATTERN_BINOP(min, Min)
LOOM_PATTERN_BINOP(max, Max)
LOOM_PATTERN_BINOP(operator==, EQ)
LOOM_PATTERN_BINOP(operator!=, NE)
LOOM_PATTERN_BINOP(operator<, LT)
LOOM_PATTERN_BINOP(operator<=, LE)
LOOM_PATTERN_BINOP(operator>, GT)
LOOM_PATTERN_BINOP(operator>=, GE)
LOOM_PATTERN_BINOP(operator&&, And)
LOOM_PATTERN_BINOP(operator||, Or)
#undef LOOM_PATTERN_BINOP

template <Pattern A> auto operator!(const A& a) { return PNot<A>(a); }
template <Pattern C, class T, class F> auto select(const C& c, const T& t, const F& f) {
  return PSelect<C, decltype(lift(t)), decltype(lift(f))>(c, lift(t), lift(f));
}
/// Marks a constant sub-expression of a result that folds at rewrite time (documentation only:
/// every built operation with immediate operands folds).
template <Pattern A> const A& fold(const A& a) { return a; }

/// Tries rules against one expression: `rw(pattern, result[, condition])` matches, checks the
/// condition (a pattern over constants that must fold to true, or a callable returning bool)
/// and builds the result; the first rule that fires leaves its output in result().
class Rewriter {
public:
  explicit Rewriter(const Expr& e) : m_expr(e) {}

  template <Pattern P, class R> bool operator()(const P& p, const R& r) {
    return (*this)(p, r, [] { return true; });
  }
  template <Pattern P, class R, class C> bool operator()(const P& p, const R& r, const C& cond) {
    m_state.reset();
    if (!p.match(m_expr, m_state)) return false;
    if constexpr (std::is_invocable_v<C>) {
      if (!cond()) return false;
    } else {
      if (!condTrue(cond.build(m_state, DataType::Int(64)))) return false;
    }
    m_result = lift(r).build(m_state, m_expr.dtype());
    return true;
  }

  /// The matched value of constant wildcard i as an integer (0 for float immediates).
  int64_t c(int i) const;
  const Expr& x(int i) const { return m_state.x[i]; }
  const Expr& result() const { return m_result; }

private:
  static bool condTrue(const Expr& e);
  Expr m_expr;
  MatchState m_state;
  Expr m_result;
};

}  // namespace loom::arith::pat
