// lower-intrinsics: rewrite intrinsics that have a cheap exact form, so codegen sees fewer.
#include "core/transform/LowerIntrinsics.h"

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

/// The value of a float or int immediate (looking through Broadcast), if it is one.
bool constValue(const Expr& e, double& out) {
  if (auto* b = e.as<BroadcastNode>()) return constValue(b->value, out);
  if (auto* f = e.as<FloatImmNode>()) return out = f->value, true;
  if (auto* i = e.as<IntImmNode>()) return out = double(i->value), true;
  return false;
}

class IntrinsicLowerer : public IRMutator {
protected:
  using IRMutator::visit;

  Expr visit(const CallNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    auto* c = e.as<CallNode>();
    if (!c) return e;
    Expr r = lower(c);
    return r.defined() ? withSpan(r, n->span) : e;
  }

private:
  static Expr lower(const CallNode* c) {
    const std::string& op = c->op;
    DataType t = c->dtype;
    if (c->args.empty()) return Expr();
    const Expr& x = c->args[0];
    bool intArg = x.dtype().element().isIntegral();
    if (op == "rsqrt" && c->args.size() == 1 && t.isFloat())
      return makeConst(t, 1.0) / call(t, "sqrt", {x});
    if (op == "fmod" && c->args.size() == 2 && intArg && c->args[1].dtype().element().isIntegral())
      return cast(t, truncmod(x, c->args[1]));
    if (c->args.size() == 1 && intArg && t == x.dtype()) {
      if (op == "floor" || op == "ceil" || op == "trunc" || op == "round") return x;
      if (op == "fabs") return select(x < makeZero(t), -x, x);
    }
    if (op == "pow" && c->args.size() == 2 && t.isFloat() && x.dtype() == t) {
      double p;
      if (constValue(c->args[1], p)) {
        if (p == 0) return makeConst(t, 1.0);
        if (p == 1) return x;
        if (p == 2) return x * x;
      }
    }
    return Expr();
  }
};

}  // namespace

PrimFunc lowerIntrinsics(const PrimFunc& f) { return updateBody(f, IntrinsicLowerer().mutate(f->body)); }

}  // namespace loom::transform
