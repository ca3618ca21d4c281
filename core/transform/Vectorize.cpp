// vectorize: loops marked vectorized become Ramp/Broadcast vector code, or serial with a note.
#include "core/transform/Vectorize.h"

#include <unordered_map>
#include <unordered_set>

#include "core/tir/Conjuncts.h"
#include "core/tir/Intrinsics.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

constexpr int kMaxLanes = 256;

/// Why a loop cannot be vectorized (caught by the loop, turned into a note).
struct NotVectorizable {
  std::string reason;
};

Expr addFold(const Expr& a, const Expr& b) {
  if (isZero(a)) return b;
  if (isZero(b)) return a;
  return a + b;
}
Expr subFold(const Expr& a, const Expr& b) { return isZero(b) ? a : a - b; }
Expr mulFold(const Expr& a, const Expr& b) {
  if (isZero(a) || isOne(b)) return a;
  if (isZero(b) || isOne(a)) return b;
  return a * b;
}

/// Base and stride of an affine lane expression: scalars and Broadcasts have stride 0.
bool affineParts(const Expr& e, Expr& base, Expr& stride) {
  if (auto* r = e.as<RampNode>()) {
    base = r->base, stride = r->stride;
    return true;
  }
  if (auto* b = e.as<BroadcastNode>()) {
    base = b->value, stride = makeZero(b->value.dtype());
    return true;
  }
  if (e.dtype().isScalar()) {
    base = e, stride = makeZero(e.dtype());
    return true;
  }
  return false;
}

class LaneVectorizer : public IRMutator {
public:
  LaneVectorizer(const Var& v, Expr min, int lanes) : m_v(v), m_lanes(lanes) { m_map[v] = ramp(min, 1, lanes); }

  Stmt run(const Stmt& body) {
    Stmt out = mutate(body);
    checkLaneIndependence();
    return out;
  }

protected:
  using IRMutator::visit;

  Expr widen(const Expr& e) const { return e.dtype().isScalar() ? broadcast(e, m_lanes) : e; }

  Expr visit(const VarNode* n, const Expr& self) override {
    auto it = m_map.find(Var(n));
    return it == m_map.end() ? self : it->second;
  }

  Expr visit(const BinaryNode* n, const Expr& self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    if (a.dtype().isScalar() && b.dtype().isScalar()) {
      if (a.same_as(n->a) && b.same_as(n->b)) return self;
      return binary(n->op, a, b);
    }
    Expr ba, sa, bb, sb;
    bool affine = affineParts(a, ba, sa) && affineParts(b, bb, sb) && a.dtype().element().isIntegral() &&
                  (a.as<RampNode>() || b.as<RampNode>());
    if (affine && n->op == BinOp::Add) return ramp(addFold(ba, bb), addFold(sa, sb), m_lanes);
    if (affine && n->op == BinOp::Sub) return ramp(subFold(ba, bb), subFold(sa, sb), m_lanes);
    if (affine && n->op == BinOp::Mul) {
      if (isZero(sb)) return ramp(mulFold(ba, bb), mulFold(sa, bb), m_lanes);
      if (isZero(sa)) return ramp(mulFold(ba, bb), mulFold(ba, sb), m_lanes);
    }
    return binary(n->op, widen(a), widen(b));
  }

  Expr visit(const CastNode* n, const Expr& self) override {
    Expr v = mutate(n->value);
    if (v.same_as(n->value)) return self;
    return cast(n->dtype.withLanes(v.dtype().lanes()), v);
  }

  Expr visit(const NotNode* n, const Expr& self) override {
    Expr a = mutate(n->a);
    if (a.same_as(n->a)) return self;
    return !a;
  }

  Expr visit(const SelectNode* n, const Expr& self) override {
    Expr c = mutate(n->condition), t = mutate(n->trueValue), f = mutate(n->falseValue);
    if (c.same_as(n->condition) && t.same_as(n->trueValue) && f.same_as(n->falseValue)) return self;
    return select(c, widen(t), widen(f));
  }

  Expr visit(const LetNode* n, const Expr& self) override {
    Expr v = mutate(n->value);
    if (v.dtype().isVector()) throw NotVectorizable{"a let binding inside an expression depends on the lane"};
    Expr b = mutate(n->body);
    if (v.same_as(n->value) && b.same_as(n->body)) return self;
    return let(n->var, v, b);
  }

  Expr visit(const RampNode* n, const Expr& self) override {
    throw NotVectorizable{"the body already holds vector expressions"};
  }
  Expr visit(const BroadcastNode* n, const Expr& self) override {
    throw NotVectorizable{"the body already holds vector expressions"};
  }

  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = mutateExprs(n->indices, idx);
    // Every load is recorded, lane-invariant ones too: a lane may store what another reads.
    Expr where = idx.size() == 1 ? idx[0] : Expr();
    if (auto* b = where.defined() ? where.as<BroadcastNode>() : nullptr) where = b->value;
    m_loads.push_back({n->buffer->data.get(), where, n->buffer->name});
    if (!changed) return self;
    if (idx.size() != 1) throw NotVectorizable{"buffer " + n->buffer->name + " is not flat"};
    if (auto* b = idx[0].as<BroadcastNode>()) return broadcast(bufferLoad(n->buffer, {b->value}), m_lanes);
    if (!idx[0].as<RampNode>())
      throw NotVectorizable{"the index into " + n->buffer->name + " is not affine in the loop var"};
    return bufferLoad(n->buffer, idx);
  }

  Expr visit(const CallNode* n, const Expr& self) override {
    std::vector<Expr> args;
    if (!mutateExprs(n->args, args)) return self;
    if (n->op == "if_then_else") {
      if (args[0].dtype().isVector())
        throw NotVectorizable{"an if_then_else condition depends on the lane"};
      return ifThenElse(args[0], widen(args[1]), widen(args[2]));
    }
    const Intrinsic* in = findIntrinsic(n->op);
    if (!in || !in->pure) throw NotVectorizable{"call of " + n->op + " has no vector form"};
    for (auto& a : args) a = widen(a);
    return call(n->dtype.withLanes(m_lanes), n->op, args);
  }

  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    std::vector<Expr> idx;
    bool ch = mutateExprs(n->indices, idx);
    Expr v = mutate(n->value);
    if (!ch && v.same_as(n->value))
      throw NotVectorizable{"the store to " + n->buffer->name + " does not depend on the loop var"};
    if (idx.size() != 1) throw NotVectorizable{"buffer " + n->buffer->name + " is not flat"};
    if (!idx[0].as<RampNode>()) {
      if (idx[0].dtype().isScalar() || idx[0].as<BroadcastNode>())
        throw NotVectorizable{"every lane stores to the same element of " + n->buffer->name};
      throw NotVectorizable{"the index into " + n->buffer->name + " is not affine in the loop var"};
    }
    if (isZero(idx[0].as<RampNode>()->stride))
      throw NotVectorizable{"every lane stores to the same element of " + n->buffer->name};
    m_stores.push_back({n->buffer->data.get(), idx[0], n->buffer->name});
    return withSpan(bufferStore(n->buffer, widen(v), idx), n->span);
  }

  /// An if whose condition depends on the lane (the guarded last chunk of a split that does not
  /// divide, `if i_0 * 16 + i_1 < 197`) guards each store lane by lane: its conjuncts that do
  /// not depend on the lane stay a scalar if around it, the others become the mask of the
  /// stores (codegen: masked stores) and of the lane-varying loads in their values (masked loads:
  /// an inactive lane must not read past the buffer).
  Stmt visit(const IfThenElseNode* n, const Stmt& self) override {
    Expr c = mutate(n->condition);
    if (c.dtype().isScalar()) return IRMutator::visit(n, self);
    if (n->elseCase.defined()) throw NotVectorizable{"an if with an else branch depends on the lane"};
    Expr scalarCond, mask;
    for (const Expr& e : tir::conjuncts(n->condition, /*keepTrue=*/true)) {
      Expr m = mutate(e);
      if (m.dtype().isScalar()) scalarCond = scalarCond.defined() ? (scalarCond && m) : m;
      else mask = mask.defined() ? (mask && m) : m;
    }
    Stmt body = mutate(n->thenCase);
    std::vector<Stmt> stores;
    if (auto* sq = body.as<SeqStmtNode>()) stores = sq->seq;
    else stores.push_back(body);
    std::vector<Stmt> guarded;
    for (const Stmt& st : stores) {
      auto* store = st.as<BufferStoreNode>();
      if (!store || store->value.dtype().isScalar())
        throw NotVectorizable{"a lane-dependent if guards more than vector stores"};
      guarded.push_back(ifThen(mask, bufferStore(store->buffer, maskLoads(store->value, mask), store->indices)));
    }
    Stmt out = seq(guarded);
    return scalarCond.defined() ? ifThen(scalarCond, out) : out;
  }

  Stmt visit(const LetStmtNode* n, const Stmt& self) override {
    Expr v = mutate(n->value);
    if (v.dtype().isScalar()) return IRMutator::visit(n, self);
    Var nv = makeVar(n->var->name, v.dtype());
    m_map[n->var] = nv;
    Stmt b = mutate(n->body);
    return letStmt(nv, v, b);
  }

  Stmt visit(const ForNode* n, const Stmt&) override {
    throw NotVectorizable{"it contains the loop " + n->loopVar->name};
  }
  Stmt visit(const AllocateNode* n, const Stmt&) override {
    throw NotVectorizable{"it allocates " + n->bufferVar->name};
  }
  Stmt visit(const WhileNode*, const Stmt&) override { throw NotVectorizable{"it contains a while loop"}; }
  Stmt visit(const AssertStmtNode*, const Stmt&) override { throw NotVectorizable{"it contains an assert"}; }
  Stmt visit(const EvaluateNode* n, const Stmt& self) override {
    Expr v = mutate(n->value);
    if (!v.same_as(n->value)) throw NotVectorizable{"an evaluated call depends on the lane"};
    return self;
  }
  Stmt visit(const BlockRealizeNode*, const Stmt&) override { throw NotVectorizable{"it contains a block"}; }

private:
  /// `value` with each load whose index varies by lane read only where `mask` holds.
  static Expr maskLoads(const Expr& value, const Expr& mask) {
    struct Masker : IRMutator {
      Expr mask;
      using IRMutator::visit;
      Expr visit(const BufferLoadNode* n, const Expr& self) override {
        if (n->indices.size() != 1 || !n->indices[0].dtype().isVector()) return self;
        return ifThenElse(mask, self, broadcast(makeZero(n->dtype.element()), n->dtype.lanes()));
      }
      Expr visit(const CallNode* n, const Expr& self) override {
        // Already masked (a guarded load inside the value).
        if (n->op == "if_then_else") return self;
        return IRMutator::visit(n, self);
      }
    } m;
    m.mask = mask;
    return m.mutate(value);
  }

  struct Access {
    const VarNode* data;
    Expr index;
    std::string name;
  };

  /// Serial order lets lane i read what lane j < i stored; vector order does not. Accept only
  /// loads of a stored buffer at exactly a stored index (each lane reads its own element).
  void checkLaneIndependence() const {
    for (auto& st : m_stores) {
      for (auto& ld : m_loads)
        if (ld.data == st.data && !(ld.index.defined() && structuralEqual(ld.index, st.index)))
          throw NotVectorizable{"lanes may read each other's results in " + st.name};
      for (auto& st2 : m_stores)
        if (&st2 != &st && st2.data == st.data && !structuralEqual(st2.index, st.index))
          throw NotVectorizable{"lanes may overwrite each other's results in " + st.name};
    }
  }

  Var m_v;
  int m_lanes;
  std::unordered_map<Var, Expr, RefHash, RefEqual> m_map;
  std::vector<Access> m_loads, m_stores;
};

class LoopVectorizer : public IRMutator {
public:
  explicit LoopVectorizer(PassContext& ctx) : m_ctx(ctx) {}

protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* n, const Stmt& self) override {
    if (n->kind != ForKind::Vectorized) return IRMutator::visit(n, self);
    std::string why;
    auto* ext = asConstInt(n->extent);
    if (!ext) {
      why = "its extent is not a constant";
    } else if (*ext <= 1) {
      // One lane: the loop body with the var at its min.
      return mutate(substitute(n->body, [&](const Var& v) { return v.same_as(n->loopVar) ? n->min : Expr(); }));
    } else if (*ext > kMaxLanes) {
      why = "its extent " + std::to_string(*ext) + " exceeds " + std::to_string(kMaxLanes) + " lanes";
    } else {
      try {
        return LaneVectorizer(n->loopVar, n->min, int(*ext)).run(n->body);
      } catch (const NotVectorizable& e) {
        why = e.reason;
      }
    }
    m_ctx.note("loop " + n->loopVar->name + " not vectorized (runs serially): " + why, n->span);
    Stmt body = mutate(n->body);
    return withSpan(forLoop(n->loopVar, n->min, n->extent, ForKind::Serial, body, n->threadTag, n->annotations),
                    n->span);
  }

private:
  PassContext& m_ctx;
};

}  // namespace

PrimFunc vectorizeLoops(const PrimFunc& f, PassContext& ctx) {
  return updateBody(f, LoopVectorizer(ctx).mutate(f->body));
}

}  // namespace loom::transform
