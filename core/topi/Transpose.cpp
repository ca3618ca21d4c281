// Workload: 2-D transpose.
#include "core/topi/WorkloadUtil.h"

namespace loom::topi::detail {

void addTransposeWorkloads(std::vector<Workload>& out) {
  out.push_back({"transpose",
                 "T_transpose[N,M] = A[M,N] with the axes swapped",
                 {{"M", 128, 1, "rows of A"}, {"N", 128, 1, "columns of A"}},
                 1,
                 [](const ParamMap& p) -> std::vector<te::Tensor> {
                   int64_t M = param(p, "M"), N = param(p, "N");
                   te::Tensor A = input({M, N}, "A");
                   te::Tensor t = te::compute(
                       shapeOf({N, M}), [&](Var i, Var j) { return A(j, i); }, "T_transpose",
                       "injective");
                   return {A, t};
                 },
                 [](const ParamMap&) { return 0.0; },
                 [](const ParamMap& p, const std::vector<runtime::NDArray>& in,
                    const std::vector<runtime::NDArray>& o) {
                   int64_t M = param(p, "M"), N = param(p, "N");
                   View A(in[0]), T(o[0]);
                   for (int64_t i = 0; i < N; ++i)
                     for (int64_t j = 0; j < M; ++j)
                       T({i, j}) = A({j, i});
                 },
                 nullptr});
}

} // namespace loom::topi::detail
