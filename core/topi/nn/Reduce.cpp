// TE computes of the reduction graph ops: sum, mean, max, min, prod over axes; argmax, argmin.
#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

namespace {

using graph::CallNode;
using graph::Type;

enum class Kind { Sum, Mean, Max, Min, Prod };

/// For an output index `i`, the input index with the reduced axes replaced by `ks` (the output
/// keeps reduced dims as extent 1 when keepdims, else drops them).
std::vector<Expr> inputIndex(const std::vector<Var>& i, const std::vector<bool>& reduced, bool keep,
                             const std::vector<te::IterVar>& ks) {
  std::vector<Expr> idx;
  size_t o = 0, r = 0;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) {
      idx.push_back(ks[r++]);
      if (keep) ++o;
    } else {
      idx.push_back(i[o++]);
    }
  }
  return idx;
}

void reduceOp(const std::string& name, Kind kind) {
  setCompute(name, [kind, name](const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
    const auto& out = staticTensor(outType, call);
    // Extents as expressions: a symbolic dim may be reduced (a mean over a dynamic length).
    const std::vector<Expr>& s = in[0]->shape;
    std::vector<bool> reduced(s.size(), call.attrs.getInts("axis").empty());
    for (int64_t a : call.attrs.getInts("axis")) reduced[size_t(normAxis(a, int64_t(s.size())))] = true;
    bool keep = call.attrs.getInt("keepdims") != 0;
    std::vector<Expr> reducedExtents;
    for (size_t d = 0; d < s.size(); ++d)
      if (reduced[d]) reducedExtents.push_back(s[d]);
    const Expr count = extentProduct(reducedExtents);
    const te::Tensor& X = in[0];
    // A long float32 sum or mean accumulates in float64 and rounds once (sumAccumulator).
    const DataType accType = kind == Kind::Sum || kind == Kind::Mean ? sumAccumulator(X->dtype, count) : X->dtype;
    const bool wide = accType != X->dtype;
    te::Tensor r = te::compute(
        teShape(out),
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          std::vector<te::IterVar> ks;
          for (size_t d = 0; d < s.size(); ++d)
            if (reduced[d]) ks.push_back(te::reduceAxis(s[d], "k" + std::to_string(d)));
          Expr v = X(inputIndex(i, reduced, keep, ks));
          if (wide) v = tir::cast(accType, v);
          switch (kind) {
          case Kind::Max: return te::max(v, ks);
          case Kind::Min: return te::min(v, ks);
          case Kind::Prod: return te::prod(v, ks);
          default: return te::sum(v, ks);
          }
        },
        "T_" + name, "comm_reduce");
    if (kind != Kind::Mean && !wide) return std::vector<te::Tensor>{r};
    return std::vector<te::Tensor>{te::compute(
        teShape(out),
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr v = r(exprs(i));
          if (kind == Kind::Mean) {
            Expr n = extentValue(v.dtype(), count);
            v = v.dtype().isFloat() ? v / n : tir::truncdiv(v, n);
          }
          return wide ? tir::cast(X->dtype, v) : v;
        },
        kind == Kind::Mean ? "T_mean" : "T_" + name + "_round", "elemwise")};
  });
}

void argOp(const std::string& name, bool isMax) {
  setCompute(name, [isMax](const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
    const auto& out = staticTensor(outType, call);
    std::vector<int64_t> s = extents(in[0]);
    size_t axis = size_t(normAxis(call.attrs.getInt("axis"), int64_t(s.size())));
    bool keep = call.attrs.getInt("keepdims") != 0, last = call.attrs.getInt("select_last_index") != 0;
    std::vector<bool> reduced(s.size(), false);
    reduced[axis] = true;
    const te::Tensor& X = in[0];
    te::IterVar k1 = te::reduceAxis(ci(s[axis]), "k");
    te::Tensor best = te::compute(
        teShape(out),
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr v = X(inputIndex(i, reduced, keep, {k1}));
          return isMax ? te::max(v, {k1}) : te::min(v, {k1});
        },
        "T_arg_best", "comm_reduce");
    te::IterVar k2 = te::reduceAxis(ci(s[axis]), "k");
    DataType i64 = DataType::Int(64);
    return std::vector<te::Tensor>{te::compute(
        teShape(out),
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr hit = tir::eq(X(inputIndex(i, reduced, keep, {k2})), best(exprs(i)));
          Expr k = tir::cast(i64, Expr(k2));
          if (last) return te::max(tir::select(hit, k, tir::intImm(i64, -1)), {k2});
          return te::min(tir::select(hit, k, tir::intImm(i64, s[axis])), {k2});
        },
        "T_arg_index", "comm_reduce")};
  });
}

}  // namespace

void registerReduceComputes() {
  reduceOp("sum", Kind::Sum);
  reduceOp("mean", Kind::Mean);
  reduceOp("max", Kind::Max);
  reduceOp("min", Kind::Min);
  reduceOp("prod", Kind::Prod);
  argOp("argmax", true);
  argOp("argmin", false);
}

}  // namespace loom::topi::nn
