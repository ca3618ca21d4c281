// createPrimFunc: one loop nest and block per compute op, inside a root block.
#include "core/te/CreatePrimFunc.h"

#include <unordered_map>
#include <unordered_set>

#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::te {

using namespace loom::tir;

namespace {

/// Structural equality of index expressions (variables by identity). Kept local: read regions
/// only need to know whether two accesses are the same point.
bool sameExpr(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->nodeKind != b->nodeKind || a.dtype() != b.dtype()) return false;
  if (auto* x = a.as<IntImmNode>()) return x->value == b.as<IntImmNode>()->value;
  if (auto* x = a.as<FloatImmNode>()) return x->value == b.as<FloatImmNode>()->value;
  if (auto* x = a.as<CastNode>()) return sameExpr(x->value, b.as<CastNode>()->value);
  if (auto* x = a.as<NotNode>()) return sameExpr(x->a, b.as<NotNode>()->a);
  if (auto* x = a.as<BinaryNode>()) {
    auto* y = b.as<BinaryNode>();
    return x->op == y->op && sameExpr(x->a, y->a) && sameExpr(x->b, y->b);
  }
  if (auto* x = a.as<SelectNode>()) {
    auto* y = b.as<SelectNode>();
    return sameExpr(x->condition, y->condition) && sameExpr(x->trueValue, y->trueValue) &&
           sameExpr(x->falseValue, y->falseValue);
  }
  auto sameList = [](const std::vector<Expr>& p, const std::vector<Expr>& q) {
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (!sameExpr(p[i], q[i])) return false;
    return true;
  };
  if (auto* x = a.as<BufferLoadNode>()) {
    auto* y = b.as<BufferLoadNode>();
    return x->buffer.same_as(y->buffer) && sameList(x->indices, y->indices);
  }
  if (auto* x = a.as<CallNode>()) {
    auto* y = b.as<CallNode>();
    return x->op == y->op && sameList(x->args, y->args);
  }
  return false; // Vars (by identity, checked above) and the rest
}

/// `e` as base + constant; base is undefined when `e` is a constant.
std::pair<Expr, int64_t> splitOffset(const Expr& e) {
  if (auto* c = asConstInt(e)) return {Expr(), *c};
  if (auto* b = e.as<BinaryNode>()) {
    if (auto* c = asConstInt(b->b)) {
      if (b->op == BinOp::Add) return {b->a, *c};
      if (b->op == BinOp::Sub) return {b->a, -*c};
    }
  }
  return {e, 0};
}

/// The region of `buf` covered by the access points `points` (one index list each).
std::vector<Range> coverRegion(const Buffer& buf, const std::vector<std::vector<Expr>>& points) {
  std::vector<Range> region;
  for (size_t d = 0; d < buf->ndim(); ++d) {
    const Expr& first = points[0][d];
    DataType t = first.dtype();
    bool same = true;
    for (auto& p : points)
      same = same && sameExpr(p[d], first);
    if (same) {
      region.emplace_back(first, intImm(t, 1));
      continue;
    }
    auto [base, off0] = splitOffset(first);
    int64_t lo = off0, hi = off0;
    bool offsets = true;
    for (auto& p : points) {
      auto [b, off] = splitOffset(p[d]);
      if (!(base.defined() ? b.defined() && sameExpr(b, base) : !b.defined())) {
        offsets = false;
        break;
      }
      lo = std::min(lo, off);
      hi = std::max(hi, off);
    }
    if (offsets) {
      Expr min = !base.defined() ? intImm(t, lo) : lo == 0 ? base : base + intImm(t, lo);
      region.emplace_back(min, intImm(t, hi - lo + 1));
    } else {
      region.emplace_back(intImm(buf->shape[d].dtype(), 0), buf->shape[d]);
    }
  }
  return region;
}

/// The read regions of `exprs`: one per buffer, in order of first load.
std::vector<BufferRegion> readRegions(const std::vector<Expr>& exprs) {
  std::vector<Buffer> order;
  std::unordered_map<Buffer, std::vector<std::vector<Expr>>, RefHash, RefEqual> points;
  for (auto& e : exprs) {
    postOrderVisit(e, [&](const IRNode* n) {
      if (n->nodeKind != NodeKind::BufferLoad) return;
      auto* load = static_cast<const BufferLoadNode*>(n);
      auto [it, fresh] = points.try_emplace(load->buffer);
      if (fresh) order.push_back(load->buffer);
      it->second.push_back(load->indices);
    });
  }
  std::vector<BufferRegion> out;
  for (auto& b : order)
    out.emplace_back(b, coverRegion(b, points[b]));
  return out;
}

/// Tensors reachable from `args`, producers before consumers (post-order from each arg in turn).
std::vector<Tensor> orderedTensors(const std::vector<Tensor>& args) {
  std::vector<Tensor> order;
  std::unordered_set<const TensorNode*> seen;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    if (!seen.insert(t.get()).second) return;
    if (auto* c = t->op.as<ComputeOpNode>())
      for (auto& in : c->inputs)
        visit(in);
    order.push_back(t);
  };
  for (auto& a : args)
    visit(a);
  return order;
}

/// The loop nest and block computing `t`, the block named `blockName`.
Stmt lowerCompute(const Tensor& t, const std::string& blockName) {
  auto* op = t->op.as<ComputeOpNode>();
  std::vector<IterVar> axes(op->axis);
  for (auto& r : op->reduceAxis())
    axes.push_back(r);

  std::unordered_map<Var, Expr, RefHash, RefEqual> toBlockVar;
  std::vector<tir::IterVar> blockVars;
  std::vector<Var> loopVars;
  std::vector<Expr> bindings;
  for (auto& a : axes) {
    Var bv = makeVar("v_" + a->name, a->dtype);
    Var lv = makeVar(a->name, a->dtype);
    toBlockVar[a.var()] = bv;
    blockVars.emplace_back(bv, a.dom, a.iterType);
    loopVars.push_back(lv);
    bindings.push_back(lv);
  }
  std::vector<Expr> point;
  for (size_t d = 0; d < op->axis.size(); ++d)
    point.push_back(blockVars[d].var);

  auto* block = new BlockNode();
  block->iterVars = blockVars;
  block->name = blockName;
  block->annotations = op->attrs;
  const Buffer& out = t->buffer;
  if (op->body.isReduce()) {
    const Reduce& r = op->body.reduce();
    Expr source = substitute(r.source, toBlockVar);
    Expr cond = substitute(r.condition, toBlockVar);
    Stmt update = bufferStore(out, reducerCombine(r.kind, bufferLoad(out, point), source), point);
    if (!isConstInt(cond, 1)) update = ifThen(cond, update);
    block->init = bufferStore(out, reducerIdentity(r.kind, t->dtype), point);
    block->body = update;
    block->reads = readRegions({cond, source});
  } else {
    Expr value = substitute(op->body.expr(), toBlockVar);
    block->body = bufferStore(out, value, point);
    block->reads = readRegions({value});
  }
  std::vector<Range> outRegion;
  for (auto& p : point)
    outRegion.emplace_back(p, intImm(p.dtype(), 1));
  block->writes = {BufferRegion(out, outRegion)};

  Stmt s = blockRealize(bindings, boolImm(true), Block(block));
  for (size_t i = axes.size(); i-- > 0;)
    s = forLoop(loopVars[i], axes[i].dom.min, axes[i].dom.extent, ForKind::Serial, s);
  return s;
}

} // namespace

PrimFunc createPrimFunc(const std::vector<Tensor>& args, std::string name) {
  if (args.empty()) LOOM_THROW(ValueError) << "createPrimFunc '" << name << "': no arguments";
  std::unordered_set<const TensorNode*> isArg;
  for (auto& a : args) {
    if (!a.defined())
      LOOM_THROW(ValueError) << "createPrimFunc '" << name << "': undefined tensor argument";
    if (!isArg.insert(a.get()).second)
      LOOM_THROW(ValueError) << "createPrimFunc '" << name << "': tensor '" << a->name
                             << "' is passed twice";
  }
  std::vector<Tensor> order = orderedTensors(args);

  std::vector<Stmt> nests;
  std::vector<Buffer> allocs;
  // Block names are unique within a function (schedules find blocks by name; a mean's sum and
  // its division were both "T_mean", and an rfactor of the sum lost track of it): a repeated
  // name gets the first free suffix _1, _2, ...
  std::unordered_set<std::string> blockNames;
  auto uniqueName = [&](const std::string& base) {
    std::string n = base;
    for (int k = 1; !blockNames.insert(n).second; ++k) n = base + "_" + std::to_string(k);
    return n;
  };
  for (auto& t : order) {
    if (!t->op.as<ComputeOpNode>()) {
      if (!isArg.count(t.get())) {
        std::string reader;
        for (auto& u : order)
          if (auto* c = u->op.as<ComputeOpNode>())
            for (auto& in : c->inputs)
              if (in.same_as(t) && reader.empty()) reader = u->name;
        LOOM_THROW(ValueError) << "createPrimFunc '" << name << "': placeholder '" << t->name
                               << "' is read by compute '" << reader
                               << "' but is not among the arguments";
      }
      continue;
    }
    if (!isArg.count(t.get())) allocs.push_back(t->buffer);
    nests.push_back(lowerCompute(t, uniqueName(t->op.as<ComputeOpNode>()->name)));
  }

  auto* root = new BlockNode();
  root->name = "root";
  root->body = seq(nests);
  root->allocBuffers = allocs;
  Stmt body = blockRealize({}, boolImm(true), Block(root));

  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> bufferMap;
  for (auto& a : args) {
    Var p = makeVar(a->name, DataType::Handle());
    params.push_back(p);
    bufferMap.emplace_back(p, a->buffer);
  }
  return makePrimFunc(std::move(name), params, bufferMap, body, {{"tir.noalias", boolImm(true)}});
}

} // namespace loom::te
