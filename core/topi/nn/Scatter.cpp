// TE computes of scatter_elements and scatter_nd, written as gathers: each output element
// reduces over the updates aimed at it (the last one for reduction none, else add/mul/max/min).
#include "core/te/Reduce.h"
#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

namespace {

using graph::CallNode;

/// An index value as int32 with negative values counted from `n`.
Expr normIndex(Expr v, int64_t n) {
  Expr x = tir::cast(DataType::Int(32), v);
  return tir::select(x < ci(0), x + ci(n), x);
}

te::ReducerKind kindOf(const std::string& r) {
  if (r == "mul") return te::ReducerKind::Prod;
  if (r == "max") return te::ReducerKind::Max;
  if (r == "min") return te::ReducerKind::Min;
  return te::ReducerKind::Sum;
}

/// The output: data where no update aims (none: the last update that does; else data combined
/// with the reduction of those updates). `match(i, k)` says whether update position k aims at i,
/// `load(i, k)` reads it; k runs over [0, positions).
std::vector<te::Tensor> scatterOutput(const CallNode& call, const te::Tensor& data, int64_t positions,
                                      const std::function<Expr(const std::vector<Var>&, Expr)>& match,
                                      const std::function<Expr(const std::vector<Var>&, Expr)>& load) {
  const std::string red = call.attrs.getString("reduction");
  std::vector<Expr> shape = data->shape;
  if (red == "none") {
    te::IterVar k = te::reduceAxis(ci(positions), "k");
    te::Tensor last = te::compute(
        shape, [&](const std::vector<Var>& i) -> te::ComputeBody { return te::max(Expr(k), {k}, match(i, k)); },
        "T_scatter_last", "scatter");
    return {te::compute(
        shape,
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr l = last(exprs(i));
          // if_then_else, not select: the simplifier drops the clamp under the condition l >= 0,
          // and a select evaluates both arms (a load at index INT_MIN).
          return tir::ifThenElse(l >= ci(0), load(i, clampIndex(l, 0, positions - 1)), data(exprs(i)));
        },
        "T_scatter", "scatter")};
  }
  te::IterVar k = te::reduceAxis(ci(positions), "k");
  te::ReducerKind kind = kindOf(red);
  te::Tensor acc = te::compute(
      shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        te::Reduce r{kind, load(i, k), {k}, match(i, k)};
        return r;
      },
      "T_scatter_reduce", "scatter");
  return {te::compute(
      shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return te::reducerCombine(kind, data(exprs(i)), acc(exprs(i)));
      },
      "T_scatter", "scatter")};
}

} // namespace

void registerScatterComputes() {
  setCompute("scatter_elements", [](const CallNode& call, const std::vector<te::Tensor>& in, const graph::Type&) {
    std::vector<int64_t> ds = extents(in[0]), is = extents(in[1]);
    size_t axis = size_t(normAxis(call.attrs.getInt("axis"), int64_t(ds.size())));
    // Update position k along axis, the other coordinates those of the output element.
    auto pos = [&](const std::vector<Var>& i, Expr k) {
      std::vector<Expr> p = exprs(i);
      for (size_t d = 0; d < p.size(); ++d) p[d] = d == axis ? k : clampIndex(p[d], 0, is[d] - 1);
      return p;
    };
    auto match = [&](const std::vector<Var>& i, Expr k) {
      Expr m = tir::eq(normIndex(in[1](pos(i, k)), ds[axis]), i[axis]);
      for (size_t d = 0; d < ds.size(); ++d)
        if (d != axis && is[d] < ds[d]) m = m && (Expr(i[d]) < ci(is[d]));
      return m;
    };
    auto load = [&](const std::vector<Var>& i, Expr k) { return in[2](pos(i, k)); };
    return scatterOutput(call, in[0], is[axis], match, load);
  });
  setCompute("scatter_nd", [](const CallNode& call, const std::vector<te::Tensor>& in, const graph::Type&) {
    std::vector<int64_t> ds = extents(in[0]), is = extents(in[1]);
    const size_t m = size_t(is.back());
    std::vector<int64_t> lead(is.begin(), is.end() - 1);
    int64_t positions = 1;
    for (int64_t v : lead) positions *= v;
    // The multi-index (in indices' leading dims) of flat update position k.
    auto unravel = [&](Expr k) {
      std::vector<Expr> u(lead.size());
      for (size_t d = lead.size(); d-- > 0;) {
        u[d] = tir::floormod(k, ci(lead[d]));
        k = tir::floordiv(k, ci(lead[d]));
      }
      return u;
    };
    auto match = [&](const std::vector<Var>& i, Expr k) {
      std::vector<Expr> u = unravel(k);
      Expr all;
      for (size_t j = 0; j < m; ++j) {
        std::vector<Expr> at = u;
        at.push_back(ci(int64_t(j)));
        Expr e = tir::eq(normIndex(in[1](at), ds[j]), i[j]);
        all = all.defined() ? (all && e) : e;
      }
      return all.defined() ? all : tir::eq(ci(0), ci(0));
    };
    auto load = [&](const std::vector<Var>& i, Expr k) {
      std::vector<Expr> at = unravel(k);
      for (size_t d = m; d < ds.size(); ++d) at.push_back(i[d]);
      return in[2](at);
    };
    return scatterOutput(call, in[0], positions, match, load);
  });
}

}  // namespace loom::topi::nn
