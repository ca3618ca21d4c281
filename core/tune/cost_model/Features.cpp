// Feature extraction: a walk over the lowered TIR with the enclosing loops on a stack.
#include <algorithm>
#include <cmath>
#include <set>

#include "core/arith/Eval.h"
#include "core/tir/Buffer.h"
#include "core/tir/Visitor.h"
#include "core/tune/Features.h"

namespace loom::tune {

namespace {

using namespace tir;

enum F : size_t {
  kLoadStride0, kLoadStride1, kLoadStrideSmall, kLoadStrideLarge,
  kStoreStride0, kStoreStride1, kStoreStrideSmall, kStoreStrideLarge,
  kVectorLoads, kVectorStores, kLoadReuse, kStoreReuse, kDistinctBuffers,
  kFloatAddSub, kFloatMul, kFloatDivMod, kFloatMinMax, kFloatCmpSelect, kIntOps, kCalls,
  kVectorOps, kMaxLanes, kParallelExtent, kParallelLoops, kSerialLoops, kMaxDepth,
  kInnermostExtent, kStatements, kAllocs, kAllocBytes, kOuterParallelWork, kTotalTrips,
  kCount
};

const std::vector<std::string> kNames = {
    "load_stride0", "load_stride1", "load_stride_small", "load_stride_large",
    "store_stride0", "store_stride1", "store_stride_small", "store_stride_large",
    "vector_loads", "vector_stores", "load_reuse", "store_reuse", "distinct_buffers",
    "float_addsub", "float_mul", "float_divmod", "float_minmax", "float_cmp_select", "int_ops", "calls",
    "vector_ops", "max_lanes", "parallel_extent", "parallel_loops", "serial_loops", "max_depth",
    "innermost_extent", "statements", "allocs", "alloc_bytes", "outer_parallel_work", "total_trips"};

struct Loop {
  const VarNode* var;
  double extent;
  ForKind kind;
};

class VarCollector : public IRVisitor {
public:
  std::set<const VarNode*> vars;
  using IRVisitor::visit;
  void visit(const VarNode* n) override { vars.insert(n); }
};

class Extractor : public IRVisitor {
public:
  std::vector<double> raw = std::vector<double>(kCount, 0.0);
  std::vector<Loop> loops;
  std::set<const BufferNode*> buffers;
  double innermostSum = 0, innermostCount = 0;

  using IRVisitor::visit;

  double trips() const {
    double t = 1;
    for (auto& l : loops) t *= l.extent;
    return t;
  }

  void visit(const ForNode* n) override {
    double ext = 1;
    if (auto* c = n->extent.as<IntImmNode>()) ext = double(std::max<int64_t>(c->value, 0));
    else ext = 16; // unknown extent: a guess
    if (n->kind == ForKind::Parallel) {
      raw[kParallelLoops] += 1;
      raw[kParallelExtent] = std::max(raw[kParallelExtent], ext);
      raw[kOuterParallelWork] = std::max(raw[kOuterParallelWork], trips() * ext);
    } else {
      raw[kSerialLoops] += 1;
    }
    loops.push_back({n->loopVar.get(), ext, n->kind});
    raw[kMaxDepth] = std::max(raw[kMaxDepth], double(loops.size()));
    bool hasInnerLoop = false;
    struct InnerFinder : IRVisitor {
      bool found = false;
      using IRVisitor::visit;
      void visit(const ForNode*) override { found = true; }
    } finder;
    finder.visitStmt(n->body);
    hasInnerLoop = finder.found;
    if (!hasInnerLoop) {
      innermostSum += ext;
      innermostCount += 1;
      raw[kTotalTrips] += trips();
    }
    IRVisitor::visit(n);
    loops.pop_back();
  }

  void visit(const AllocateNode* n) override {
    raw[kAllocs] += 1;
    double elems = 1;
    for (auto& e : n->extents)
      if (auto* c = e.as<IntImmNode>()) elems *= double(c->value);
    raw[kAllocBytes] += elems * n->dtype.bytes();
    IRVisitor::visit(n);
  }

  void visit(const BufferStoreNode* n) override {
    raw[kStatements] += 1;
    access(n->buffer.get(), n->indices, /*store=*/true, n->value.dtype().lanes());
    IRVisitor::visit(n);
  }
  void visit(const BufferLoadNode* n) override {
    access(n->buffer.get(), n->indices, /*store=*/false, n->dtype.lanes());
    IRVisitor::visit(n);
  }
  void visit(const BinaryNode* n) override {
    double w = trips() * n->dtype.lanes();
    if (n->dtype.lanes() > 1) raw[kVectorOps] += trips();
    if (n->a.dtype().isFloat()) {
      switch (n->op) {
      case BinOp::Add:
      case BinOp::Sub: raw[kFloatAddSub] += w; break;
      case BinOp::Mul: raw[kFloatMul] += w; break;
      case BinOp::Div:
      case BinOp::Mod:
      case BinOp::FloorDiv:
      case BinOp::FloorMod: raw[kFloatDivMod] += w; break;
      case BinOp::Min:
      case BinOp::Max: raw[kFloatMinMax] += w; break;
      default: raw[kFloatCmpSelect] += w; break;
      }
    } else {
      raw[kIntOps] += w;
    }
    IRVisitor::visit(n);
  }
  void visit(const SelectNode* n) override {
    raw[kFloatCmpSelect] += trips() * n->dtype.lanes();
    IRVisitor::visit(n);
  }
  void visit(const CallNode* n) override {
    raw[kCalls] += trips() * n->dtype.lanes();
    IRVisitor::visit(n);
  }

private:
  /// The innermost loop's stride in the flattened index (std::nullopt: not affine / unknown).
  std::optional<int64_t> strideOf(const Expr& index, const VarNode* var) {
    if (auto* r = index.as<RampNode>()) {
      auto s = strideOf(r->base, var);
      return s;
    }
    VarCollector vc;
    vc.visitExpr(index);
    if (!vc.vars.count(var)) return 0;
    arith::VarValueMap env0, env1;
    for (const VarNode* v : vc.vars) {
      Var ref(v);
      env0[ref] = 0;
      env1[ref] = v == var ? 1 : 0;
    }
    auto a = arith::evalInt(index, env0, false), b = arith::evalInt(index, env1, false);
    if (!a || !b) return std::nullopt;
    return *b - *a;
  }

  void access(const BufferNode* buf, const std::vector<Expr>& indices, bool store, int lanes) {
    buffers.insert(buf);
    double t = trips();
    if (lanes > 1) raw[store ? kVectorStores : kVectorLoads] += t;
    raw[kMaxLanes] = std::max(raw[kMaxLanes], double(lanes));
    if (indices.size() != 1) return; // flattened buffers have one index
    const Expr& idx = indices[0];
    // Stride along the innermost serial/unrolled loop, or along the vector lanes when vectorized.
    std::optional<int64_t> stride;
    if (auto* r = idx.as<RampNode>()) {
      if (auto* c = r->stride.as<IntImmNode>()) stride = c->value;
    } else if (!loops.empty()) {
      stride = strideOf(idx, loops.back().var);
    } else {
      stride = 0;
    }
    size_t base = store ? kStoreStride0 : kLoadStride0;
    int64_t s = stride ? std::llabs(*stride) : -1;
    size_t bucket = s == 0 ? 0 : s == 1 ? 1 : (s > 1 && s <= 16) ? 2 : 3;
    raw[base + bucket] += t;
    // Reuse: trip counts of enclosing loops the index does not use.
    VarCollector vc;
    vc.visitExpr(idx);
    double reuse = 1;
    for (auto& l : loops)
      if (!vc.vars.count(l.var)) reuse *= l.extent;
    raw[store ? kStoreReuse : kLoadReuse] += std::log2(reuse) * t;
  }
};

} // namespace

size_t featureCount() { return kCount; }
const std::vector<std::string>& featureNames() { return kNames; }

std::vector<float> extractFeatures(const PrimFunc& lowered) {
  Extractor e;
  e.visitStmt(lowered->body);
  std::vector<float> out(kCount);
  double loadTrips = 0, storeTrips = 0;
  for (size_t i = kLoadStride0; i <= kLoadStrideLarge; ++i) loadTrips += e.raw[i];
  for (size_t i = kStoreStride0; i <= kStoreStrideLarge; ++i) storeTrips += e.raw[i];
  e.raw[kLoadReuse] = loadTrips > 0 ? e.raw[kLoadReuse] / loadTrips : 0;   // mean log2 reuse
  e.raw[kStoreReuse] = storeTrips > 0 ? e.raw[kStoreReuse] / storeTrips : 0;
  e.raw[kDistinctBuffers] = double(e.buffers.size());
  e.raw[kInnermostExtent] = e.innermostCount > 0 ? e.innermostSum / e.innermostCount : 0;
  for (size_t i = 0; i < kCount; ++i) {
    bool plain = i == kLoadReuse || i == kStoreReuse || i == kMaxDepth || i == kDistinctBuffers;
    out[i] = float(plain ? e.raw[i] : std::log2(1.0 + e.raw[i]));
  }
  return out;
}

} // namespace loom::tune
