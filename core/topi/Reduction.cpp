// Workload: reduce_sum over the last axis.
#include "core/topi/WorkloadUtil.h"

namespace loom::topi::detail {

void addReductionWorkloads(std::vector<Workload>& out) {
  out.push_back({"reduce_sum",
                 "A_red[M] = sum over k of A[M,N]",
                 {{"M", 128, 1, "rows"}, {"N", 128, 1, "reduced length"}},
                 1,
                 [](const ParamMap& p) -> std::vector<te::Tensor> {
                   int64_t M = param(p, "M"), N = param(p, "N");
                   te::Tensor A = input({M, N}, "A");
                   te::IterVar k = te::reduceAxis(c32(N), "k");
                   te::Tensor red = te::compute(
                       shapeOf({M}), [&](Var i) { return te::sum(A(i, k), {k}); }, "A_red",
                       "comm_reduce");
                   return {A, red};
                 },
                 [](const ParamMap& p) { return double(param(p, "M")) * param(p, "N"); },
                 [](const ParamMap& p, const std::vector<runtime::NDArray>& in,
                    const std::vector<runtime::NDArray>& o) {
                   int64_t M = param(p, "M"), N = param(p, "N");
                   View A(in[0]), R(o[0]);
                   for (int64_t i = 0; i < M; ++i) {
                     double acc = 0;
                     for (int64_t k = 0; k < N; ++k)
                       acc += A({i, k});
                     R({i}) = float(acc);
                   }
                 },
                 [](const ParamMap& p) { return param(p, "N"); }});
}

} // namespace loom::topi::detail
