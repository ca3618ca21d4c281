// countFlops: float operations times the product of the enclosing loop extents.
#include "core/tune/FlopCount.h"

#include "core/tir/Intrinsics.h"
#include "core/tir/Visitor.h"

namespace loom::tune {

namespace {

class FlopCounter : public tir::IRVisitor {
public:
  double flops = 0;
  bool unknown = false;

  void visit(const tir::BinaryNode* n) override {
    if (n->dtype.isFloat() && !tir::isComparison(n->op) && !tir::isLogical(n->op) && n->op != tir::BinOp::Mod &&
        n->op != tir::BinOp::FloorMod)
      add(double(n->dtype.lanes()));
    tir::IRVisitor::visit(n);
  }
  void visit(const tir::CallNode* n) override {
    if (n->op == "if_then_else" && n->args.size() == 3) {
      visitExpr(n->args[0]);
      oneOf(n->args[1], n->args[2]);
      return;
    }
    if (n->dtype.isFloat()) {
      const tir::Intrinsic* in = tir::findIntrinsic(n->op);
      if (in && in->pure && in->evalFloat) add(double(n->dtype.lanes()));
    }
    tir::IRVisitor::visit(n);
  }
  void visit(const tir::SelectNode* n) override {
    visitExpr(n->condition);
    oneOf(n->trueValue, n->falseValue);
  }
  void visit(const tir::ForNode* n) override {
    const auto* ext = n->extent.as<tir::IntImmNode>();
    double saved = m_scale;
    bool savedKnown = m_known;
    if (ext)
      m_scale *= double(ext->value);
    else
      m_known = false;
    visitStmt(n->body);
    m_scale = saved;
    m_known = savedKnown;
  }
  void visit(const tir::BlockNode* n) override {
    // The init only writes the reduction's identity; iter domains and regions are index math.
    visitStmt(n->body);
  }
  void visit(const tir::BlockRealizeNode* n) override { visitStmt(tir::Stmt(n->block)); }

private:
  /// One of two values is used: the costlier one counts (a Winograd transform's select over tile
  /// positions costs one position's sum, not all of them).
  void oneOf(const tir::Expr& a, const tir::Expr& b) {
    FlopCounter ca, cb;
    ca.m_scale = cb.m_scale = m_scale;
    ca.m_known = cb.m_known = m_known;
    ca.visitExpr(a);
    cb.visitExpr(b);
    const FlopCounter& c = ca.flops >= cb.flops ? ca : cb;
    flops += c.flops;
    unknown |= ca.unknown || cb.unknown;
  }
  void add(double ops) {
    if (!m_known) unknown = true;
    flops += ops * m_scale;
  }
  double m_scale = 1;
  bool m_known = true;
};

} // namespace

double countFlops(const tir::PrimFunc& f) {
  if (!f.defined() || !f->body.defined()) return 0;
  FlopCounter c;
  c.visitStmt(f->body);
  return c.unknown ? 0 : c.flops;
}

} // namespace loom::tune
