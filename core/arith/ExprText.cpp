// Precedence-aware infix printing of expressions.
#include "core/arith/ExprText.h"

#include <sstream>

#include "core/tir/Buffer.h"
#include "core/tir/Op.h"

namespace loom::arith {

using namespace tir;

namespace {

int precedence(BinOp op) {
  switch (op) {
  case BinOp::Or: return 1;
  case BinOp::And: return 2;
  case BinOp::EQ: case BinOp::NE: case BinOp::LT: case BinOp::LE: case BinOp::GT: case BinOp::GE: return 3;
  case BinOp::Add: case BinOp::Sub: return 4;
  case BinOp::Mul: case BinOp::FloorDiv: case BinOp::FloorMod: return 5;
  default: return 7;  // printed as a call
  }
}

const char* infixSymbol(BinOp op) {
  switch (op) {
  case BinOp::Mul: return "*";
  default: return binOpSymbol(op);
  }
}

int exprPrecedence(const Expr& e) {
  if (auto* b = e.as<BinaryNode>()) return precedence(b->op);
  if (e.as<NotNode>()) return 6;
  if (auto* i = e.as<IntImmNode>()) return i->value < 0 ? 6 : 7;
  return 7;
}

void print(std::ostream& os, const Expr& e);

void printOperand(std::ostream& os, const Expr& e, int minPrec) {
  if (exprPrecedence(e) < minPrec) {
    os << '(';
    print(os, e);
    os << ')';
  } else {
    print(os, e);
  }
}

void print(std::ostream& os, const Expr& e) {
  if (!e.defined()) {
    os << "<undefined>";
    return;
  }
  switch (e->nodeKind) {
  case NodeKind::IntImm: {
    auto* n = e.as<IntImmNode>();
    if (n->dtype.isBool()) os << (n->value ? "True" : "False");
    else os << n->value;
    return;
  }
  case NodeKind::FloatImm: os << e.as<FloatImmNode>()->value; return;
  case NodeKind::StringImm: os << '"' << e.as<StringImmNode>()->value << '"'; return;
  case NodeKind::Var: os << e.as<VarNode>()->name; return;
  case NodeKind::Cast: {
    auto* n = e.as<CastNode>();
    os << n->dtype.str() << '(';
    print(os, n->value);
    os << ')';
    return;
  }
  case NodeKind::Binary: {
    auto* n = e.as<BinaryNode>();
    int p = precedence(n->op);
    if (p == 7) {
      os << binOpName(n->op) << '(';
      print(os, n->a);
      os << ", ";
      print(os, n->b);
      os << ')';
      return;
    }
    // Left-associative; comparisons do not chain, so both of their sides bind tighter.
    printOperand(os, n->a, p == 3 ? p + 1 : p);
    const char* sym = infixSymbol(n->op);
    if (p == 5) os << sym;
    else os << ' ' << sym << ' ';
    printOperand(os, n->b, p + 1);
    return;
  }
  case NodeKind::Not:
    os << "not ";
    printOperand(os, e.as<NotNode>()->a, 6);
    return;
  case NodeKind::Select: {
    auto* n = e.as<SelectNode>();
    os << "select(";
    print(os, n->condition);
    os << ", ";
    print(os, n->trueValue);
    os << ", ";
    print(os, n->falseValue);
    os << ')';
    return;
  }
  case NodeKind::Let: {
    auto* n = e.as<LetNode>();
    os << "let(" << n->var->name << " = ";
    print(os, n->value);
    os << ", ";
    print(os, n->body);
    os << ')';
    return;
  }
  case NodeKind::BufferLoad: {
    auto* n = e.as<BufferLoadNode>();
    os << n->buffer->name << '[';
    for (size_t i = 0; i < n->indices.size(); ++i) {
      if (i) os << ", ";
      print(os, n->indices[i]);
    }
    os << ']';
    return;
  }
  case NodeKind::Ramp: {
    auto* n = e.as<RampNode>();
    os << "ramp(";
    print(os, n->base);
    os << ", ";
    print(os, n->stride);
    os << ", " << n->lanes << ')';
    return;
  }
  case NodeKind::Broadcast: {
    auto* n = e.as<BroadcastNode>();
    os << "broadcast(";
    print(os, n->value);
    os << ", " << n->lanes << ')';
    return;
  }
  case NodeKind::Call: {
    auto* n = e.as<CallNode>();
    os << n->op << '(';
    for (size_t i = 0; i < n->args.size(); ++i) {
      if (i) os << ", ";
      print(os, n->args[i]);
    }
    os << ')';
    return;
  }
  default: os << "<stmt>"; return;
  }
}

}  // namespace

std::string exprText(const Expr& e) {
  std::ostringstream os;
  print(os, e);
  return os.str();
}

}  // namespace loom::arith
