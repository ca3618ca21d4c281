// Workload: layer normalization over the last axis with scale (gamma) and shift (beta).
#include "core/topi/WorkloadUtil.h"

#include <cmath>

namespace loom::topi::detail {

namespace {

constexpr double kEpsilon = 1e-5;

std::vector<te::Tensor> layernorm(const ParamMap& p) {
  int64_t M = param(p, "M"), N = param(p, "N");
  DataType f32 = DataType::Float(32);
  te::Tensor A = input({M, N}, "A"), gamma = input({N}, "gamma"), beta = input({N}, "beta");
  Expr n = tir::floatImm(f32, double(N));
  te::IterVar k = te::reduceAxis(c32(N), "k");
  te::Tensor sum = te::compute(
      shapeOf({M}), [&](Var i) { return te::sum(A(i, k), {k}); }, "T_layer_norm_sum",
      "comm_reduce");
  te::IterVar k2 = te::reduceAxis(c32(N), "k");
  te::Tensor varsum = te::compute(
      shapeOf({M}),
      [&](Var i) {
        Expr d = A(i, k2) - sum(i) / n;
        return te::sum(d * d, {k2});
      },
      "T_layer_norm_varsum", "comm_reduce");
  te::Tensor out = te::compute(
      shapeOf({M, N}),
      [&](Var i, Var j) {
        Expr inv = tir::call("rsqrt", {varsum(i) / n + tir::floatImm(f32, kEpsilon)});
        return (A(i, j) - sum(i) / n) * inv * gamma(j) + beta(j);
      },
      "T_layer_norm", "injective");
  return {A, gamma, beta, out};
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
                 layernorm,
                 [](const ParamMap& p) { return 8.0 * param(p, "M") * param(p, "N"); },
                 layernormRef,
                 [](const ParamMap& p) { return param(p, "N"); }});
}

} // namespace loom::topi::detail
