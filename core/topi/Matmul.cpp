// matmul C[M,N] = A[M,K] B[K,N] and batch_matmul C[B,M,N] = A[B,M,K] B[B,K,N]: computes and
// presets.
#include "core/topi/WorkloadUtil.h"

namespace loom::topi {

te::Tensor matmul(const te::Tensor& A, const te::Tensor& B, std::string name) {
  detail::checkRank(A, 2, "matmul");
  detail::checkRank(B, 2, "matmul");
  if (!detail::sameExtent(A->shape[1], B->shape[0]))
    LOOM_THROW(ValueError) << "matmul: inner dimensions of '" << A->name << "' "
                           << detail::shapeStr(A) << " and '" << B->name << "' "
                           << detail::shapeStr(B) << " differ";
  te::IterVar k = te::reduceAxis(A->shape[1], "k");
  return te::compute(
      {A->shape[0], B->shape[1]},
      [&](tir::Var i, tir::Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, std::move(name),
      "matmul");
}

te::Tensor batchMatmul(const te::Tensor& A, const te::Tensor& B, std::string name) {
  detail::checkRank(A, 3, "batch_matmul");
  detail::checkRank(B, 3, "batch_matmul");
  if (!detail::sameExtent(A->shape[0], B->shape[0]) ||
      !detail::sameExtent(A->shape[2], B->shape[1]))
    LOOM_THROW(ValueError) << "batch_matmul: shapes " << detail::shapeStr(A) << " of '" << A->name
                           << "' and " << detail::shapeStr(B) << " of '" << B->name
                           << "' do not fit (B,M,K) x (B,K,N)";
  te::IterVar k = te::reduceAxis(A->shape[2], "k");
  return te::compute(
      {A->shape[0], A->shape[1], B->shape[2]},
      [&](tir::Var b, tir::Var i, tir::Var j) { return te::sum(A(b, i, k) * B(b, k, j), {k}); },
      std::move(name), "batch_matmul", {}, {"b", "i", "j"});
}

namespace detail {

namespace {

std::vector<te::Tensor> matmulWorkload(const ParamMap& p) {
  int64_t M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  te::Tensor A = input({M, K}, "A"), B = input({K, N}, "B");
  return {A, B, matmul(A, B)};
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

std::vector<te::Tensor> batchMatmulWorkload(const ParamMap& p) {
  int64_t Bn = param(p, "B"), M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  te::Tensor A = input({Bn, M, K}, "A"), B = input({Bn, K, N}, "B");
  return {A, B, batchMatmul(A, B)};
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
       matmulWorkload,
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
                 batchMatmulWorkload,
                 [](const ParamMap& p) {
                   return 2.0 * param(p, "B") * param(p, "M") * param(p, "N") * param(p, "K");
                 },
                 batchMatmulRef,
                 [](const ParamMap& p) { return param(p, "K"); }});
}

} // namespace detail

} // namespace loom::topi
