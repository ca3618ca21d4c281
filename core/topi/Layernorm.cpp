// layer normalization over the last axis with scale (gamma) and shift (beta): compute and preset.
#include "core/tir/Printer.h"
#include "core/topi/WorkloadUtil.h"

#include <cmath>

namespace loom::topi {

using tir::Expr;
using tir::Var;

te::Tensor layerNorm(const te::Tensor& A, const te::Tensor& gamma, const te::Tensor& beta,
                     double eps) {
  if (A->ndim() == 0)
    LOOM_THROW(ValueError) << "layer_norm: tensor '" << A->name << "' is a scalar";
  size_t last = A->ndim() - 1;
  for (const te::Tensor* t : {&gamma, &beta})
    if ((*t)->ndim() != 1 || !detail::sameExtent((*t)->shape[0], A->shape[last]))
      LOOM_THROW(ValueError) << "layer_norm: '" << (*t)->name << "' of shape "
                             << detail::shapeStr(*t) << " must have shape ("
                             << tir::printExpr(A->shape[last]) << ",)";
  DataType t = A->dtype;
  Expr n = tir::cast(t, A->shape[last]);
  if (const int64_t* c = tir::asConstInt(A->shape[last])) n = tir::makeConst(t, double(*c));
  std::vector<Expr> outer(A->shape.begin(), A->shape.end() - 1);
  auto all = [](const std::vector<Var>& i) { return std::vector<Expr>(i.begin(), i.end()); };
  auto with = [](const std::vector<Var>& i, Expr e) {
    std::vector<Expr> idx(i.begin(), i.end());
    idx.push_back(e);
    return idx;
  };
  auto prefix = [](const std::vector<Var>& i) { return std::vector<Expr>(i.begin(), i.end() - 1); };
  te::IterVar k = te::reduceAxis(A->shape[last], "k");
  te::Tensor sum = te::compute(
      outer,
      [&](const std::vector<Var>& i) -> te::ComputeBody { return te::sum(A(with(i, k)), {k}); },
      "T_layer_norm_sum", "comm_reduce");
  te::IterVar k2 = te::reduceAxis(A->shape[last], "k");
  te::Tensor varsum = te::compute(
      outer,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr d = A(with(i, k2)) - sum(all(i)) / n;
        return te::sum(d * d, {k2});
      },
      "T_layer_norm_varsum", "comm_reduce");
  return te::compute(
      A->shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr inv = tir::call("rsqrt", {varsum(prefix(i)) / n + tir::makeConst(t, eps)});
        return (A(all(i)) - sum(prefix(i)) / n) * inv * gamma(i.back()) + beta(i.back());
      },
      "T_layer_norm", "injective");
}

namespace detail {

namespace {

constexpr double kEpsilon = 1e-5;

std::vector<te::Tensor> layernormWorkload(const ParamMap& p) {
  int64_t M = param(p, "M"), N = param(p, "N");
  te::Tensor A = input({M, N}, "A"), gamma = input({N}, "gamma"), beta = input({N}, "beta");
  return {A, gamma, beta, layerNorm(A, gamma, beta, kEpsilon)};
}

void layernormRef(const ParamMap& p, const std::vector<runtime::NDArray>& in,
                  const std::vector<runtime::NDArray>& out) {
  int64_t M = param(p, "M"), N = param(p, "N");
  View A(in[0]), G(in[1]), B(in[2]), O(out[0]);
  for (int64_t i = 0; i < M; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < N; ++j)
      mean += A({i, j});
    mean /= double(N);
    for (int64_t j = 0; j < N; ++j)
      var += (A({i, j}) - mean) * (A({i, j}) - mean);
    var /= double(N);
    double inv = 1.0 / std::sqrt(var + kEpsilon);
    for (int64_t j = 0; j < N; ++j)
      O({i, j}) = float((A({i, j}) - mean) * inv * G({j}) + B({j}));
  }
}

} // namespace

void addLayernormWorkloads(std::vector<Workload>& out) {
  out.push_back({"layernorm",
                 "T_layer_norm[M,N] = (A - mean) / sqrt(var + 1e-5) * gamma[N] + beta[N], per row",
                 {{"M", 128, 1, "rows"}, {"N", 128, 1, "normalized length"}},
                 3,
                 layernormWorkload,
                 [](const ParamMap& p) { return 8.0 * param(p, "M") * param(p, "N"); },
                 layernormRef,
                 [](const ParamMap& p) { return param(p, "N"); }});
}

} // namespace detail

} // namespace loom::topi
