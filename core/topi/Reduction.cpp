// sum over one axis: compute and the reduce_sum preset.
#include "core/topi/WorkloadUtil.h"

namespace loom::topi {

using tir::Expr;
using tir::Var;

te::Tensor sum(const te::Tensor& A, int axis, std::string name) {
  int rank = int(A->ndim());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    LOOM_THROW(ValueError) << "sum: axis " << axis << " is out of range for tensor '" << A->name
                           << "' of shape " << detail::shapeStr(A);
  std::vector<Expr> shape;
  for (int d = 0; d < rank; ++d)
    if (d != axis) shape.push_back(A->shape[d]);
  te::IterVar k = te::reduceAxis(A->shape[axis], "k");
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> idx(i.begin(), i.end());
        idx.insert(idx.begin() + axis, k);
        return te::sum(A(idx), {k});
      },
      std::move(name), "comm_reduce");
}

namespace detail {

void addReductionWorkloads(std::vector<Workload>& out) {
  out.push_back({"reduce_sum",
                 "A_red[M] = sum over k of A[M,N]",
                 {{"M", 128, 1, "rows"}, {"N", 128, 1, "reduced length"}},
                 1,
                 [](const ParamMap& p) -> std::vector<te::Tensor> {
                   te::Tensor A = input({param(p, "M"), param(p, "N")}, "A");
                   return {A, sum(A, 1)};
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

} // namespace detail

} // namespace loom::topi
