// Deep equality and total order of expressions by kind, type, operator, value and children.
#include "core/arith/ExprOrder.h"

#include <cstring>

#include "core/tir/Buffer.h"

namespace loom::arith {

using namespace tir;

namespace {

template <class T> int cmp3(const T& a, const T& b) { return a < b ? -1 : (b < a ? 1 : 0); }

int compareType(DataType a, DataType b) {
  if (int c = cmp3(int(a.code()), int(b.code()))) return c;
  if (int c = cmp3(a.bits(), b.bits())) return c;
  return cmp3(a.lanes(), b.lanes());
}

int compareList(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (int c = cmp3(a.size(), b.size())) return c;
  for (size_t i = 0; i < a.size(); ++i)
    if (int c = exprCompare(a[i], b[i])) return c;
  return 0;
}

}  // namespace

int exprCompare(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return 0;
  if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
  // Variables sort before everything else so that sums list their variables first.
  auto rank = [](const Expr& e) {
    return e->nodeKind == NodeKind::Var ? -1 : int(e->nodeKind);
  };
  if (int c = cmp3(rank(a), rank(b))) return c;
  if (int c = compareType(a.dtype(), b.dtype())) return c;
  switch (a->nodeKind) {
  case NodeKind::IntImm: return cmp3(a.as<IntImmNode>()->value, b.as<IntImmNode>()->value);
  case NodeKind::FloatImm: {
    double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
    uint64_t bx, by;
    std::memcpy(&bx, &x, 8);
    std::memcpy(&by, &y, 8);
    return cmp3(bx, by);
  }
  case NodeKind::StringImm: return cmp3(a.as<StringImmNode>()->value, b.as<StringImmNode>()->value);
  case NodeKind::Var: {
    auto *x = a.as<VarNode>(), *y = b.as<VarNode>();
    if (int c = cmp3(x->name, y->name)) return c;
    return cmp3(static_cast<const void*>(x), static_cast<const void*>(y));
  }
  case NodeKind::Cast: return exprCompare(a.as<CastNode>()->value, b.as<CastNode>()->value);
  case NodeKind::Binary: {
    auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
    if (int c = cmp3(int(x->op), int(y->op))) return c;
    if (int c = exprCompare(x->a, y->a)) return c;
    return exprCompare(x->b, y->b);
  }
  case NodeKind::Not: return exprCompare(a.as<NotNode>()->a, b.as<NotNode>()->a);
  case NodeKind::Select: {
    auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
    if (int c = exprCompare(x->condition, y->condition)) return c;
    if (int c = exprCompare(x->trueValue, y->trueValue)) return c;
    return exprCompare(x->falseValue, y->falseValue);
  }
  case NodeKind::Let: {
    auto *x = a.as<LetNode>(), *y = b.as<LetNode>();
    if (int c = exprCompare(Expr(x->var), Expr(y->var))) return c;
    if (int c = exprCompare(x->value, y->value)) return c;
    return exprCompare(x->body, y->body);
  }
  case NodeKind::BufferLoad: {
    // By the buffer's name and the indices before the buffer's identity, so that the order (the
    // order of a sum's terms after simplification, hence the code) does not follow heap addresses
    // and the same program lowers to the same code in every run.
    auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
    if (int c = cmp3(x->buffer->name, y->buffer->name)) return c;
    if (int c = compareList(x->indices, y->indices)) return c;
    return cmp3(static_cast<const void*>(x->buffer.get()), static_cast<const void*>(y->buffer.get()));
  }
  case NodeKind::Ramp: {
    auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
    if (int c = exprCompare(x->base, y->base)) return c;
    return exprCompare(x->stride, y->stride);
  }
  case NodeKind::Broadcast: return exprCompare(a.as<BroadcastNode>()->value, b.as<BroadcastNode>()->value);
  case NodeKind::Call: {
    auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
    if (int c = cmp3(x->op, y->op)) return c;
    return compareList(x->args, y->args);
  }
  default: return cmp3(static_cast<const void*>(a.get()), static_cast<const void*>(b.get()));
  }
}

bool exprEqual(const Expr& a, const Expr& b) { return exprCompare(a, b) == 0; }

}  // namespace loom::arith
