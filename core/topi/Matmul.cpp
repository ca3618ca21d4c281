// Workloads: matmul C[M,N] = A[M,K] B[K,N] and batch_matmul C[B,M,N] = A[B,M,K] B[B,K,N].
#include "core/topi/WorkloadUtil.h"

namespace loom::topi::detail {

namespace {

std::vector<te::Tensor> matmul(const ParamMap& p) {
  int64_t M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  te::Tensor A = input({M, K}, "A"), B = input({K, N}, "B");
  te::IterVar k = te::reduceAxis(c32(K), "k");
  te::Tensor C = te::compute(
      shapeOf({M, N}), [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C",
      "matmul");
  return {A, B, C};
}

void matmulRef(const ParamMap& p, const std::vector<runtime::NDArray>& in,
               const std::vector<runtime::NDArray>& out) {
  int64_t M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  View A(in[0]), B(in[1]), C(out[0]);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += double(A({i, k})) * B({k, j});
      C({i, j}) = float(acc);
    }
}

std::vector<te::Tensor> batchMatmul(const ParamMap& p) {
  int64_t Bn = param(p, "B"), M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  te::Tensor A = input({Bn, M, K}, "A"), B = input({Bn, K, N}, "B");
  te::IterVar k = te::reduceAxis(c32(K), "k");
  te::Tensor C =
      te::compute(shapeOf({Bn, M, N}),
                  [&](Var b, Var i, Var j) { return te::sum(A(b, i, k) * B(b, k, j), {k}); }, "C",
                  "batch_matmul", {}, {"b", "i", "j"});
  return {A, B, C};
}

void batchMatmulRef(const ParamMap& p, const std::vector<runtime::NDArray>& in,
                    const std::vector<runtime::NDArray>& out) {
  int64_t Bn = param(p, "B"), M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  View A(in[0]), B(in[1]), C(out[0]);
  for (int64_t b = 0; b < Bn; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += double(A({b, i, k})) * B({b, k, j});
        C({b, i, j}) = float(acc);
      }
}

} // namespace

void addMatmulWorkloads(std::vector<Workload>& out) {
  out.push_back(
      {"matmul",
       "dense matrix product C[M,N] = A[M,K] * B[K,N]",
       {{"M", 128, 1, "rows of A and C"},
        {"N", 128, 1, "columns of B and C"},
        {"K", 128, 1, "reduction length"}},
       2,
       matmul,
       [](const ParamMap& p) { return 2.0 * param(p, "M") * param(p, "N") * param(p, "K"); },
       matmulRef,
       [](const ParamMap& p) { return param(p, "K"); }});
  out.push_back({"batch_matmul",
                 "batched matrix product C[B,M,N] = A[B,M,K] * B[B,K,N]",
                 {{"B", 4, 1, "batch size"},
                  {"M", 64, 1, "rows"},
                  {"N", 64, 1, "columns"},
                  {"K", 64, 1, "reduction length"}},
                 2,
                 batchMatmul,
                 [](const ParamMap& p) {
                   return 2.0 * param(p, "B") * param(p, "M") * param(p, "N") * param(p, "K");
                 },
                 batchMatmulRef,
                 [](const ParamMap& p) { return param(p, "K"); }});
}

} // namespace loom::topi::detail
