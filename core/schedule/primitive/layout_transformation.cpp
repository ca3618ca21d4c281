// transform_layout and pad_einsum: their errors, legality checks, implementation and trace
// instructions.
#include "core/schedule/primitive/layout_transformation.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/arith/Analyzer.h"
#include "core/arith/IntSet.h"
#include "core/schedule/Analysis.h"
#include "core/schedule/Script.h"
#include "core/schedule/primitive/block_dataflow.h"
#include "core/schedule/primitive/reduction.h"
#include "core/tir/Op.h"
#include "core/tir/Printer.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

namespace {

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

/// The integer value of an index expression built from ints, vars in `env` and + - * // %.
std::optional<int64_t> evalIndex(const Expr& e,
                                 const std::unordered_map<const VarNode*, int64_t>& env) {
  if (auto* i = e.as<IntImmNode>()) return i->value;
  if (auto* v = e.as<VarNode>()) {
    auto it = env.find(v);
    if (it == env.end()) return std::nullopt;
    return it->second;
  }
  if (auto* c = e.as<CastNode>()) return evalIndex(c->value, env);
  auto* b = e.as<BinaryNode>();
  if (!b) return std::nullopt;
  auto x = evalIndex(b->a, env), y = evalIndex(b->b, env);
  if (!x || !y) return std::nullopt;
  switch (b->op) {
  case BinOp::Add:
    return *x + *y;
  case BinOp::Sub:
    return *x - *y;
  case BinOp::Mul:
    return *x * *y;
  case BinOp::FloorDiv:
    if (*y == 0) return std::nullopt;
    return *x / *y - ((*x % *y != 0) && ((*x < 0) != (*y < 0)));
  case BinOp::FloorMod:
    if (*y == 0) return std::nullopt;
    return ((*x % *y) + *y) % *y;
  case BinOp::Min:
    return std::min(*x, *y);
  case BinOp::Max:
    return std::max(*x, *y);
  default:
    return std::nullopt;
  }
}

/// Rewrites every access of `oldBuf` to `newBuf` at `map(indices)`, in loads, stores, block
/// signatures and allocations.
class LayoutRewriter : public IRMutator {
public:
  LayoutRewriter(Buffer oldBuf, Buffer newBuf, std::function<std::vector<Expr>(std::vector<Expr>)> map)
      : m_old(std::move(oldBuf)), m_new(std::move(newBuf)), m_map(std::move(map)) {}

protected:
  using IRMutator::visit;
  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    auto* l = e.as<BufferLoadNode>();
    if (!l->buffer.same_as(m_old)) return e;
    return bufferLoad(m_new, simplified(m_map(l->indices)));
  }
  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    auto* st = s.as<BufferStoreNode>();
    if (!st->buffer.same_as(m_old)) return s;
    return bufferStore(m_new, st->value, simplified(m_map(st->indices)));
  }
  Stmt visit(const BlockNode* n, const Stmt& self) override {
    for (auto& iv : n->iterVars)
      m_an.bind(iv.var, iv.dom);
    Stmt s = IRMutator::visit(n, self);
    auto* b = s.as<BlockNode>();
    bool touches = std::any_of(b->reads.begin(), b->reads.end(), [&](auto& r) { return r.buffer.same_as(m_old); }) ||
                   std::any_of(b->writes.begin(), b->writes.end(), [&](auto& r) { return r.buffer.same_as(m_old); }) ||
                   std::any_of(b->allocBuffers.begin(), b->allocBuffers.end(), [&](auto& a) { return a.same_as(m_old); });
    if (!touches) return s;
    auto* c = new BlockNode(*b);
    for (auto& r : c->reads)
      r = region(r);
    for (auto& r : c->writes)
      r = region(r);
    for (auto& a : c->allocBuffers)
      if (a.same_as(m_old)) a = m_new;
    return Stmt(c);
  }
  Stmt visit(const ForNode* n, const Stmt& self) override {
    m_an.bind(n->loopVar, Range(n->min, n->extent));
    return IRMutator::visit(n, self);
  }

private:
  std::vector<Expr> simplified(std::vector<Expr> v) {
    for (auto& e : v)
      e = m_an.simplify(e);
    return v;
  }
  BufferRegion region(const BufferRegion& r) {
    if (!r.buffer.same_as(m_old)) return r;
    bool point = std::all_of(r.region.begin(), r.region.end(), [](const Range& x) { return isOne(x.extent); });
    std::vector<Range> out;
    if (point) {
      std::vector<Expr> idx;
      for (auto& x : r.region)
        idx.push_back(x.min);
      for (auto& e : simplified(m_map(idx)))
        out.emplace_back(e, intImm(e.dtype(), 1));
      return BufferRegion(m_new, out);
    }
    std::vector<Expr> vars;
    arith::IntSetMap dom;
    for (size_t k = 0; k < r.region.size(); ++k) {
      Var x = makeVar("x" + std::to_string(k), r.region[k].min.dtype());
      vars.push_back(x);
      dom[x] = arith::IntSet::interval(r.region[k].min, r.region[k].min + r.region[k].extent - 1);
    }
    std::vector<Expr> mapped = m_map(vars);
    for (size_t d = 0; d < mapped.size(); ++d) {
      Range full(intImm(m_new->shape[d].dtype(), 0), m_new->shape[d]);
      out.push_back(dataflow::toRange(arith::evalSet(mapped[d], dom, &m_an), full, m_an));
    }
    return BufferRegion(m_new, out);
  }

  Buffer m_old, m_new;
  std::function<std::vector<Expr>(std::vector<Expr>)> m_map;
  arith::Analyzer m_an;
};

/// The buffer `which` selects in `block`.
Buffer selectBuffer(const Schedule& sch, const BlockNode* block, const BufferSelector& which,
                    const char* primitive) {
  if (which.index >= 0) {
    const auto& regions = which.isWrite ? block->writes : block->reads;
    if (size_t(which.index) >= regions.size())
      throw BufferIndexError(std::string(primitive) + ": block " + quoted(block->name) + " has " +
                                 std::to_string(regions.size()) + " " +
                                 (which.isWrite ? "write" : "read") + " buffer(s), index " +
                                 std::to_string(which.index) + " is out of range",
                             sch.func(), {block});
    return regions[size_t(which.index)].buffer;
  }
  for (auto* rs : {&block->reads, &block->writes})
    for (auto& r : *rs)
      if (r.buffer->name == which.name) return r.buffer;
  throw BufferIndexError(std::string(primitive) + ": block " + quoted(block->name) +
                             " reads and writes no buffer named " + quoted(which.name),
                         sch.func(), {block});
}

/// A copy of `f` with buffer `oldBuf` replaced by `newBuf` in its buffer map.
PrimFunc withParamBuffer(const PrimFunc& f, const Buffer& oldBuf, const Buffer& newBuf) {
  auto* n = new PrimFuncNode(*f);
  for (auto& [v, b] : n->bufferMap)
    if (b.same_as(oldBuf)) b = newBuf;
  return PrimFunc(n);
}

} // namespace

// --- transform_layout ---------------------------------------------------------------------

void transformLayout(Schedule& sch, const BlockRV& blockRV, const BufferSelector& which,
                     const std::shared_ptr<const ScriptLambda>& indexMap) {
  const BlockNode* block = sch.get(blockRV);
  // Step 1. The buffer: found, compact, of constant shape.
  Buffer buf = selectBuffer(sch, block, which, "transform_layout");
  if (!buf->strides.empty())
    throw UnsupportedBufferError("transform_layout: buffer " + quoted(buf->name) +
                                     " has explicit strides",
                                 sch.func(), {block});
  std::vector<int64_t> shape;
  int64_t total = 1;
  for (auto& e : buf->shape) {
    auto c = constIntValue(e);
    if (!c)
      throw UnsupportedBufferError("transform_layout: buffer " + quoted(buf->name) +
                                       " has a symbolic shape",
                                   sch.func(), {block});
    shape.push_back(*c);
    total *= *c;
  }
  const int64_t kMaxChecked = int64_t(1) << 22;
  if (total > kMaxChecked)
    throw UnsupportedBufferError("transform_layout: buffer " + quoted(buf->name) + " has " +
                                     std::to_string(total) +
                                     " elements, more than the bijection check handles (" +
                                     std::to_string(kMaxChecked) + ")",
                                 sch.func(), {block});
  // Step 2. The map: arity, supported constructs.
  if (!indexMap)
    throw IndexMapError("transform_layout: no index map given", sch.func(), {block});
  const std::string mapText = indexMap->str();
  std::vector<Var> params;
  std::vector<Expr> paramExprs;
  for (size_t k = 0; k < indexMap->params.size(); ++k) {
    params.push_back(makeVar(indexMap->params[k], buf->shape.empty() ? DataType::Int(32)
                                                                      : buf->shape[0].dtype()));
    paramExprs.push_back(params.back());
  }
  if (params.size() != shape.size())
    throw IndexMapError("transform_layout: the index map `" + mapText + "` takes " +
                            std::to_string(params.size()) + " indices but buffer " +
                            quoted(buf->name) + " has rank " + std::to_string(shape.size()),
                        sch.func(), {block});
  std::vector<Expr> image;
  try {
    image = indexMap->apply(paramExprs);
  } catch (const Error& e) {
    throw IndexMapError("transform_layout: the index map `" + mapText + "`: " + e.what(),
                        sch.func(), {block});
  }
  if (image.empty())
    throw IndexMapError("transform_layout: the index map `" + mapText + "` gives no index",
                        sch.func(), {block});
  // Step 3. Evaluate the map on every index: the new shape and a bijection onto it.
  std::unordered_map<const VarNode*, int64_t> env;
  std::vector<int64_t> lo(image.size(), INT64_MAX), hi(image.size(), INT64_MIN);
  std::vector<std::vector<int64_t>> points;
  std::vector<int64_t> idx(shape.size(), 0);
  bool any = total > 0;
  for (int64_t n = 0; n < total; ++n) {
    for (size_t k = 0; k < shape.size(); ++k)
      env[params[k].get()] = idx[k];
    std::vector<int64_t> p;
    for (size_t d = 0; d < image.size(); ++d) {
      auto v = evalIndex(image[d], env);
      if (!v)
        throw IndexMapError("transform_layout: the index map `" + mapText +
                                "` cannot be evaluated (division by zero?)",
                            sch.func(), {block});
      lo[d] = std::min(lo[d], *v);
      hi[d] = std::max(hi[d], *v);
      p.push_back(*v);
    }
    points.push_back(std::move(p));
    for (size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  std::vector<int64_t> newShape;
  int64_t newTotal = 1;
  for (size_t d = 0; d < image.size(); ++d) {
    if (any && lo[d] < 0)
      throw IndexMapError("transform_layout: the index map `" + mapText + "` gives index " +
                              std::to_string(lo[d]) + " in dimension " + std::to_string(d) +
                              " (indices must be non-negative)",
                          sch.func(), {block});
    newShape.push_back(any ? hi[d] + 1 : 0);
    newTotal *= newShape.back();
  }
  if (newTotal != total)
    throw IndexMapError("transform_layout: the index map `" + mapText + "` maps the " +
                            std::to_string(total) + " elements of buffer " + quoted(buf->name) +
                            " into a shape of " + std::to_string(newTotal) +
                            " elements; it must be a bijection (padding is not supported)",
                        sch.func(), {block});
  std::vector<char> seen(size_t(std::max<int64_t>(total, 1)), 0);
  for (auto& p : points) {
    int64_t flat = 0;
    for (size_t d = 0; d < p.size(); ++d)
      flat = flat * newShape[d] + p[d];
    if (seen[size_t(flat)])
      throw IndexMapError("transform_layout: the index map `" + mapText +
                              "` sends two elements of buffer " + quoted(buf->name) +
                              " to the same place; it must be a bijection",
                          sch.func(), {block});
    seen[size_t(flat)] = 1;
  }
  // Step 4. The new buffer and every access rewritten through the map.
  std::vector<Expr> shapeExprs;
  for (int64_t s : newShape)
    shapeExprs.push_back(intImm(buf->shape.empty() ? DataType::Int(32) : buf->shape[0].dtype(), s));
  Buffer newBuf = withShape(buf, shapeExprs);
  auto map = [indexMap](std::vector<Expr> in) { return indexMap->apply(in); };
  LayoutRewriter rw(buf, newBuf, map);
  PrimFunc f = withBody(sch.func(), rw.mutate(sch.func()->body));
  f = withParamBuffer(f, buf, newBuf);
  sch.replaceFunc(f);
  Value selValue = which.index >= 0
                       ? Value(std::vector<Value>{Value(which.isWrite ? "write" : "read"),
                                                  Value(which.index)})
                       : Value(which.name);
  sch.record("transform_layout", {Value(blockRV), selValue, Value(indexMap)}, {});
}

// --- pad_einsum ---------------------------------------------------------------------------

namespace {

/// The factors of a product (through casts).
void productFactors(const Expr& e, std::vector<Expr>& out) {
  if (auto* b = e.as<BinaryNode>(); b && b->op == BinOp::Mul) {
    productFactors(b->a, out);
    productFactors(b->b, out);
    return;
  }
  if (auto* c = e.as<CastNode>()) return productFactors(c->value, out);
  out.push_back(e);
}

/// The loads and stores of a statement, in order.
std::vector<const IRNode*> accesses(const Stmt& s) {
  std::vector<const IRNode*> out;
  if (!s.defined()) return out;
  postOrderVisit(s, [&](const IRNode* n) {
    if (n->nodeKind == NodeKind::BufferLoad || n->nodeKind == NodeKind::BufferStore)
      out.push_back(n);
  });
  return out;
}

/// Rebuilds the loop nest under `top`: loops whose var is in `extents` get that extent, the
/// realize of `oldBlock` realizes `newBlock`.
class PaddedNestBuilder : public IRMutator {
public:
  PaddedNestBuilder(std::unordered_map<const VarNode*, Expr> extents, const BlockNode* oldBlock,
                    Block newBlock)
      : m_extents(std::move(extents)), m_old(oldBlock), m_new(std::move(newBlock)) {}

protected:
  using IRMutator::visit;
  Stmt visit(const ForNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    auto it = m_extents.find(n->loopVar.get());
    if (it == m_extents.end()) return s;
    auto* c = new ForNode(*s.as<ForNode>());
    c->extent = it->second;
    return Stmt(c);
  }
  Stmt visit(const BlockRealizeNode* n, const Stmt& self) override {
    if (n->block.get() != m_old) return self;
    return blockRealize(n->iterValues, n->predicate, m_new);
  }

private:
  std::unordered_map<const VarNode*, Expr> m_extents;
  const BlockNode* m_old;
  Block m_new;
};

/// `for v0, v1, ... in T.grid(extents): block name: out[v] = value(v)` with spatial iter vars.
Stmt copyNest(const std::string& name, const std::vector<Expr>& extents,
              const std::function<Stmt(const std::vector<Expr>&)>& body,
              const std::function<std::vector<BufferRegion>(const std::vector<Expr>&)>& reads,
              const std::function<BufferRegion(const std::vector<Expr>&)>& write) {
  auto* b = new BlockNode();
  b->name = name;
  std::vector<Var> loopVars;
  std::vector<Expr> iterVars, values;
  for (size_t d = 0; d < extents.size(); ++d) {
    Var lv = makeVar("ax" + std::to_string(d), extents[d].dtype());
    Var iv = makeVar("v" + std::to_string(d), extents[d].dtype());
    loopVars.push_back(lv);
    iterVars.push_back(iv);
    values.push_back(lv);
    b->iterVars.emplace_back(iv, Range(intImm(extents[d].dtype(), 0), extents[d]), IterType::DataPar);
  }
  b->body = body(iterVars);
  b->reads = reads(iterVars);
  b->writes.push_back(write(iterVars));
  Stmt s = blockRealize(values, boolImm(true), Block(b));
  for (size_t d = extents.size(); d-- > 0;)
    s = forLoop(loopVars[d], intImm(extents[d].dtype(), 0), extents[d], ForKind::Serial, s);
  return s;
}

BufferRegion pointAt(const Buffer& b, const std::vector<Expr>& idx) {
  std::vector<Range> r;
  for (auto& i : idx)
    r.emplace_back(i, intImm(i.dtype(), 1));
  return BufferRegion(b, r);
}

} // namespace

void padEinsum(Schedule& sch, const BlockRV& blockRV, const std::vector<int64_t>& padding) {
  const BlockNode* block = sch.get(blockRV);
  const BlockRealizeNode* realize = sch.realizeOf(block);
  const std::string bname = quoted(block->name);
  auto notEinsum = [&](const std::string& why) {
    return NotEinsumError("pad_einsum: block " + bname + " is not an einsum: " + why, sch.func(),
                          {block});
  };
  // Step 1. One padding per iter var, each positive.
  if (padding.size() != block->iterVars.size())
    throw ScheduleValueError("pad_einsum: block " + bname + " has " +
                                 std::to_string(block->iterVars.size()) + " iter vars but " +
                                 std::to_string(padding.size()) + " paddings were given",
                             sch.func(), {block});
  for (int64_t p : padding)
    if (p < 1)
      throw ScheduleValueError("pad_einsum: paddings must be positive, got " + std::to_string(p),
                               sch.func(), {block});
  // Step 2. The block: one store, iter vars from 0 with constant extents, each bound to its own
  // loop of the same range, every buffer index a single iter var.
  auto* store = dataflow::singleStore(block);
  if (!store) throw notEinsum("its body is not a single buffer store");
  std::vector<const ForNode*> loops = loopsAbove(sch, block);
  std::unordered_map<const VarNode*, size_t> iterIndex;
  std::vector<int64_t> ext, padded;
  std::vector<const ForNode*> boundLoop;
  for (size_t i = 0; i < block->iterVars.size(); ++i) {
    const IterVar& iv = block->iterVars[i];
    auto e = constIntValue(iv.dom.extent);
    if (!isZero(iv.dom.min) || !e)
      throw notEinsum("iter var " + quoted(iv.var->name) + " does not range over [0, constant)");
    if (iv.iterType != IterType::DataPar && iv.iterType != IterType::CommReduce)
      throw notEinsum("iter var " + quoted(iv.var->name) + " is " + iterTypeName(iv.iterType));
    auto* v = realize->iterValues[i].as<VarNode>();
    auto loop = std::find_if(loops.begin(), loops.end(),
                             [&](const ForNode* l) { return l->loopVar.get() == v; });
    if (!v || loop == loops.end() ||
        std::find(boundLoop.begin(), boundLoop.end(), *loop) != boundLoop.end() ||
        !isZero((*loop)->min) || constIntValue((*loop)->extent) != e)
      throw notEinsum("iter var " + quoted(iv.var->name) +
                      " is not bound to a loop of its own with the same range");
    boundLoop.push_back(*loop);
    iterIndex[iv.var.get()] = i;
    ext.push_back(*e);
    padded.push_back((*e + padding[i] - 1) / padding[i] * padding[i]);
  }
  for (const IRNode* n : accesses(Stmt(block))) {
    const auto& indices = n->nodeKind == NodeKind::BufferLoad
                              ? static_cast<const BufferLoadNode*>(n)->indices
                              : static_cast<const BufferStoreNode*>(n)->indices;
    const Buffer& buf = n->nodeKind == NodeKind::BufferLoad
                            ? static_cast<const BufferLoadNode*>(n)->buffer
                            : static_cast<const BufferStoreNode*>(n)->buffer;
    for (auto& idx : indices) {
      auto* v = idx.as<VarNode>();
      if (!v || !iterIndex.count(v))
        throw notEinsum("the index `" + printExpr(idx) + "` of buffer " + quoted(buf->name) +
                        " is not a single iter var");
    }
  }
  const Buffer out = store->buffer;
  if (!block->init.defined())
    for (const IRNode* n : accesses(block->body))
      if (n->nodeKind == NodeKind::BufferLoad &&
          static_cast<const BufferLoadNode*>(n)->buffer.same_as(out))
        throw notEinsum("it reads its output buffer " + quoted(out->name) +
                        " without an init (the padded copy would start undefined)");
  // Step 3. A padded reduce iter var needs a sum of products with a factor indexed by it (that
  // factor reads zeros in the padding, so the padded terms add nothing).
  bool padsReduce = false;
  for (size_t i = 0; i < ext.size(); ++i)
    padsReduce |= padded[i] != ext[i] && block->iterVars[i].iterType == IterType::CommReduce;
  if (padsReduce) {
    Expr rhs;
    auto reducer = matchReducer(block, &rhs);
    if (!reducer || reducer->op != BinOp::Add)
      throw notEinsum("padding a reduce iter var needs a sum reduction `Y[...] = Y[...] + ...`");
    std::vector<Expr> factors;
    productFactors(rhs, factors);
    for (size_t i = 0; i < ext.size(); ++i) {
      if (padded[i] == ext[i] || block->iterVars[i].iterType != IterType::CommReduce) continue;
      bool zeroed = std::any_of(factors.begin(), factors.end(), [&](const Expr& f) {
        auto* l = f.as<BufferLoadNode>();
        return l && !l->buffer.same_as(out) &&
               std::any_of(l->indices.begin(), l->indices.end(),
                           [&](const Expr& x) { return usesVar(x, block->iterVars[i].var); });
      });
      if (!zeroed)
        throw notEinsum("no factor of the product is indexed by reduce iter var " +
                        quoted(block->iterVars[i].var->name) +
                        ", so its padding would add non-zero terms");
    }
  }
  const ForNode* top = *std::min_element(boundLoop.begin(), boundLoop.end(), [&](auto* a, auto* b) {
    return std::find(loops.begin(), loops.end(), a) < std::find(loops.begin(), loops.end(), b);
  });
  if (realizesUnder(top).size() != 1)
    throw NotSingleChildError("pad_einsum: loop " + quoted(top->loopVar->name) + " above block " +
                                  bname + " holds other blocks too",
                              sch.func(), {top});
  bool changes = false;
  for (size_t i = 0; i < ext.size(); ++i)
    changes |= padded[i] != ext[i];
  if (!changes) {
    std::vector<Value> pv(padding.begin(), padding.end());
    sch.record("pad_einsum", {Value(blockRV), Value(pv)}, {});
    return;
  }
  // Step 4. Padded copies of the inputs indexed by a padded iter var.
  auto paddedExtent = [&](const Expr& idx) {
    size_t i = iterIndex.at(idx.as<VarNode>());
    return padded[i];
  };
  std::unordered_map<const BufferNode*, Buffer> padOf;
  std::vector<Buffer> order;
  std::unordered_map<const BufferNode*, std::vector<int64_t>> padShape;
  for (const IRNode* n : accesses(block->body)) {
    if (n->nodeKind != NodeKind::BufferLoad) continue;
    auto* l = static_cast<const BufferLoadNode*>(n);
    if (l->buffer.same_as(out)) continue;
    bool needs = false;
    for (auto& idx : l->indices) {
      size_t i = iterIndex.at(idx.as<VarNode>());
      needs |= padded[i] != ext[i];
    }
    if (!needs) continue;
    auto& shp = padShape[l->buffer.get()];
    if (shp.empty()) {
      for (auto& e : l->buffer->shape) {
        auto c = constIntValue(e);
        if (!c)
          throw UnsupportedBufferError("pad_einsum: buffer " + quoted(l->buffer->name) +
                                           " has a symbolic shape",
                                       sch.func(), {block});
        shp.push_back(*c);
      }
      order.push_back(l->buffer);
    }
    for (size_t d = 0; d < l->indices.size(); ++d)
      shp[d] = std::max(shp[d], paddedExtent(l->indices[d]));
  }
  std::vector<Stmt> before;
  for (auto& x : order) {
    std::vector<Expr> shape;
    for (int64_t s : padShape[x.get()])
      shape.push_back(intImm(x->shape[0].dtype(), s));
    Buffer xp = makeBuffer(x->name + "_pad", x->dtype, shape, x->scope);
    padOf[x.get()] = xp;
    before.push_back(copyNest(
        dataflow::freshBlockName(sch.func(), x->name + "_pad"), shape,
        [&](const std::vector<Expr>& v) {
          Expr inside;
          for (size_t d = 0; d < v.size(); ++d) {
            Expr c = v[d] < x->shape[d];
            inside = inside.defined() ? (inside && c) : c;
          }
          return bufferStore(xp, ifThenElse(inside, bufferLoad(x, v), makeZero(x->dtype)), v);
        },
        [&](const std::vector<Expr>&) { return std::vector<BufferRegion>{BufferRegion::full(x)}; },
        [&](const std::vector<Expr>& v) { return pointAt(xp, v); }));
  }
  // Step 5. The padded output and the block computing into it, then the copy back.
  bool padOut = false;
  std::vector<Expr> outPadShape, outValid;
  for (auto& idx : store->indices) {
    size_t i = iterIndex.at(idx.as<VarNode>());
    padOut |= padded[i] != ext[i];
    outPadShape.push_back(intImm(idx.dtype(), padded[i]));
    outValid.push_back(intImm(idx.dtype(), ext[i]));
  }
  Buffer outPad;
  if (padOut) {
    outPad = makeBuffer(out->name + "_pad", out->dtype, outPadShape, out->scope);
    padOf[out.get()] = outPad;
  }
  std::unordered_map<const BufferNode*, Buffer> swap(padOf.begin(), padOf.end());
  auto* nb = new BlockNode(*block);
  for (size_t i = 0; i < nb->iterVars.size(); ++i)
    nb->iterVars[i].dom = Range(intImm(nb->iterVars[i].dom.extent.dtype(), 0),
                                intImm(nb->iterVars[i].dom.extent.dtype(), padded[i]));
  Stmt swapped = dataflow::replaceBuffers(Stmt(nb), swap);
  std::unordered_map<const VarNode*, Expr> loopExtents;
  for (size_t i = 0; i < boundLoop.size(); ++i)
    loopExtents[boundLoop[i]->loopVar.get()] = intImm(boundLoop[i]->extent.dtype(), padded[i]);
  Stmt nest = PaddedNestBuilder(loopExtents, block, Block(static_cast<const BlockNode*>(swapped.get())))
                  .mutate(Stmt(top));
  std::vector<Stmt> all = before;
  all.push_back(nest);
  if (padOut) {
    all.push_back(copyNest(
        dataflow::freshBlockName(sch.func(), out->name + "_unpad"), outValid,
        [&](const std::vector<Expr>& v) { return bufferStore(out, bufferLoad(outPad, v), v); },
        [&](const std::vector<Expr>& v) { return std::vector<BufferRegion>{pointAt(outPad, v)}; },
        [&](const std::vector<Expr>& v) { return pointAt(out, v); }));
  }
  // Step 6. Replace the loop nest, allocate the padded buffers in the enclosing block.
  sch.replace(top, seq(all));
  std::vector<Buffer> allocs;
  for (auto& x : order)
    allocs.push_back(padOf[x.get()]);
  if (padOut) allocs.push_back(outPad);
  // The scope block was rebuilt by the replace: find it again by the computing block.
  auto compute = findBlocks(sch.func(), block->name);
  LOOM_ICHECK(compute.size() == 1) << "pad_einsum: the block is not in the function";
  const BlockNode* scope = enclosingBlock(sch, compute[0]);
  PrimFunc f = sch.func();
  for (auto& a : allocs) {
    const BlockNode* newScope = nullptr;
    f = dataflow::withAlloc(f, scope, a, &newScope);
    scope = newScope;
  }
  sch.replaceFunc(f);
  std::vector<Value> pv(padding.begin(), padding.end());
  sch.record("pad_einsum", {Value(blockRV), Value(pv)}, {});
}

// --- Trace instructions -------------------------------------------------------------------

void registerLayoutTransformationInstructions() {
  registerInstructionKind(
      {"transform_layout",
       {{"block", vt::Block}, {"buffer", vt::String | vt::List}, {"index_map", vt::Lambda}},
       false,
       false,
       false,
       "Re-lay out a buffer through an index map (lambda)",
       [](Schedule& s, const std::vector<Value>& in, const Value&) {
         BufferSelector sel;
         if (in[1].kind() == Value::Kind::String) {
           sel.name = in[1].asString();
         } else {
           const auto& l = in[1].asList();
           if (l.size() != 2 || l[0].kind() != Value::Kind::String ||
               (l[0].asString() != "read" && l[0].asString() != "write") ||
               l[1].kind() != Value::Kind::Int)
             throw BufferIndexError("transform_layout: buffer must be a name or (\"read\" | "
                                    "\"write\", index)",
                                    s.func());
           sel.isWrite = l[0].asString() == "write";
           sel.index = l[1].asInt();
         }
         transformLayout(s, in[0].asBlock(), sel, in[2].asLambda());
         return std::vector<Value>{};
       }});
  registerInstructionKind({"pad_einsum",
                           {{"block", vt::Block}, {"padding", vt::List, vt::Int}},
                           false,
                           false,
                           false,
                           "Pad an einsum block's iteration space to multiples",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             std::vector<int64_t> p;
                             for (auto& v : in[1].asList())
                               p.push_back(v.asInt());
                             padEinsum(s, in[0].asBlock(), p);
                             return std::vector<Value>{};
                           }});
}

} // namespace loom::tir
