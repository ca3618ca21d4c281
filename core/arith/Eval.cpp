// Integer evaluation: C wrap-around, truncating and flooring division, 0/1 booleans.
#include "core/arith/Eval.h"

namespace loom::arith {

using namespace tir;

int64_t wrapToType(int64_t v, DataType t) {
  if (t.isBool()) return v != 0;
  int bits = t.bits();
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = uint64_t(v) & mask;
  if (t.isInt() && (u >> (bits - 1)) & 1) u |= ~mask;
  return int64_t(u);
}

std::optional<int64_t> foldIntBinary(BinOp op, int64_t a, int64_t b, DataType t) {
  bool isUnsigned = t.isUInt() || t.isBool();
  uint64_t ua = uint64_t(a), ub = uint64_t(b);
  auto wrap = [&](uint64_t v) { return wrapToType(int64_t(v), t); };
  switch (op) {
  case BinOp::Add: return wrap(ua + ub);
  case BinOp::Sub: return wrap(ua - ub);
  case BinOp::Mul: return wrap(ua * ub);
  case BinOp::Div:
  case BinOp::Mod:
  case BinOp::FloorDiv:
  case BinOp::FloorMod: {
    if (b == 0) return std::nullopt;
    if (isUnsigned) {
      bool isDiv = op == BinOp::Div || op == BinOp::FloorDiv;
      return wrap(isDiv ? ua / ub : ua % ub);
    }
    if (b == -1) {
      // Avoid the INT64_MIN / -1 trap: the quotient wraps, the remainder is 0.
      if (op == BinOp::Mod || op == BinOp::FloorMod) return 0;
      return wrap(0 - ua);
    }
    int64_t q = a / b, r = a % b;
    if (op == BinOp::Div) return wrap(uint64_t(q));
    if (op == BinOp::Mod) return wrap(uint64_t(r));
    bool adjust = r != 0 && ((r < 0) != (b < 0));
    if (op == BinOp::FloorDiv) return wrap(uint64_t(adjust ? q - 1 : q));
    return wrap(uint64_t(adjust ? r + b : r));
  }
  case BinOp::Min: return isUnsigned ? int64_t(std::min(ua, ub)) : std::min(a, b);
  case BinOp::Max: return isUnsigned ? int64_t(std::max(ua, ub)) : std::max(a, b);
  case BinOp::EQ: return a == b;
  case BinOp::NE: return a != b;
  case BinOp::LT: return isUnsigned ? ua < ub : a < b;
  case BinOp::LE: return isUnsigned ? ua <= ub : a <= b;
  case BinOp::GT: return isUnsigned ? ua > ub : a > b;
  case BinOp::GE: return isUnsigned ? ua >= ub : a >= b;
  case BinOp::And: return (a != 0) && (b != 0);
  case BinOp::Or: return (a != 0) || (b != 0);
  }
  return std::nullopt;
}

namespace {

bool isIntLike(DataType t) { return t.isScalar() && (t.isIntegral() || t.isBool()); }

class Evaluator {
public:
  Evaluator(const VarValueMap& env, bool strictSelect) : m_env(env), m_strictSelect(strictSelect) {}

  std::optional<int64_t> eval(const Expr& e) {
    if (!e.defined() || !isIntLike(e.dtype())) return std::nullopt;
    switch (e->nodeKind) {
    case NodeKind::IntImm: return wrapToType(e.as<IntImmNode>()->value, e.dtype());
    case NodeKind::Var: {
      Var v(e.as<VarNode>());
      if (auto it = m_locals.find(v); it != m_locals.end()) return it->second;
      if (auto it = m_env.find(v); it != m_env.end()) return wrapToType(it->second, e.dtype());
      return std::nullopt;
    }
    case NodeKind::Cast: {
      auto* n = e.as<CastNode>();
      auto v = eval(n->value);
      if (!v) return std::nullopt;
      return wrapToType(*v, n->dtype);
    }
    case NodeKind::Binary: {
      auto* n = e.as<BinaryNode>();
      auto a = eval(n->a);
      if (!a) return std::nullopt;
      auto b = eval(n->b);
      if (!b) return std::nullopt;
      return foldIntBinary(n->op, *a, *b, n->a.dtype());
    }
    case NodeKind::Not: {
      auto a = eval(e.as<NotNode>()->a);
      if (!a) return std::nullopt;
      return *a == 0;
    }
    case NodeKind::Select: {
      auto* n = e.as<SelectNode>();
      auto c = eval(n->condition);
      if (c && !m_strictSelect) return eval(*c ? n->trueValue : n->falseValue);
      auto t = eval(n->trueValue);
      auto f = eval(n->falseValue);
      // Both branches are evaluated: a division by zero in either makes the select undefined.
      if (!c || !t || !f) return std::nullopt;
      return *c ? t : f;
    }
    case NodeKind::Let: {
      auto* n = e.as<LetNode>();
      auto v = eval(n->value);
      if (!v) return std::nullopt;
      auto saved = m_locals.find(n->var) != m_locals.end() ? std::optional(m_locals[n->var]) : std::nullopt;
      m_locals[n->var] = *v;
      auto r = eval(n->body);
      if (saved) m_locals[n->var] = *saved;
      else m_locals.erase(n->var);
      return r;
    }
    default: return std::nullopt;
    }
  }

private:
  const VarValueMap& m_env;
  bool m_strictSelect;
  VarValueMap m_locals;
};

}  // namespace

std::optional<int64_t> evalInt(const Expr& e, const VarValueMap& env, bool strictSelect) {
  return Evaluator(env, strictSelect).eval(e);
}

}  // namespace loom::arith
