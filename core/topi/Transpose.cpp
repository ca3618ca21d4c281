// transpose: compute and the 2-D preset.
#include "core/topi/WorkloadUtil.h"

namespace loom::topi {

using tir::Expr;
using tir::Var;

te::Tensor transpose(const te::Tensor& A, std::vector<int> axes, std::string name) {
  size_t rank = A->ndim();
  if (axes.empty())
    for (size_t d = rank; d-- > 0;)
      axes.push_back(int(d));
  std::vector<bool> seen(rank, false);
  if (axes.size() != rank)
    LOOM_THROW(ValueError) << "transpose: " << axes.size() << " axes for tensor '" << A->name
                           << "' of rank " << rank;
  for (int& a : axes) {
    if (a < 0) a += int(rank);
    if (a < 0 || a >= int(rank) || seen[a])
      LOOM_THROW(ValueError) << "transpose: axes of tensor '" << A->name
                             << "' must be a permutation of 0.." << rank - 1;
    seen[a] = true;
  }
  std::vector<Expr> shape;
  for (int a : axes)
    shape.push_back(A->shape[a]);
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> idx(rank);
        for (size_t d = 0; d < rank; ++d)
          idx[axes[d]] = i[d];
        return A(idx);
      },
      std::move(name), "injective");
}

namespace detail {

void addTransposeWorkloads(std::vector<Workload>& out) {
  out.push_back({"transpose",
                 "T_transpose[N,M] = A[M,N] with the axes swapped",
                 {{"M", 128, 1, "rows of A"}, {"N", 128, 1, "columns of A"}},
                 1,
                 [](const ParamMap& p) -> std::vector<te::Tensor> {
                   te::Tensor A = input({param(p, "M"), param(p, "N")}, "A");
                   return {A, transpose(A)};
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

} // namespace detail

} // namespace loom::topi
