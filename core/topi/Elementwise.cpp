// Workloads: relu and add (with broadcasting of a row vector).
#include "core/topi/WorkloadUtil.h"

#include <algorithm>

namespace loom::topi::detail {

namespace {

std::vector<te::Tensor> relu(const ParamMap& p) {
  int64_t M = param(p, "M"), N = param(p, "N");
  te::Tensor A = input({M, N}, "A");
  te::Tensor out = te::compute(
      shapeOf({M, N}),
      [&](Var i, Var j) { return tir::max(A(i, j), tir::floatImm(DataType::Float(32), 0)); },
      "T_relu", "elemwise");
  return {A, out};
}

std::vector<te::Tensor> add(const ParamMap& p) {
  int64_t M = param(p, "M"), N = param(p, "N");
  bool bcast = param(p, "broadcast") != 0;
  te::Tensor A = input({M, N}, "A");
  te::Tensor B = bcast ? input({N}, "B") : input({M, N}, "B");
  te::Tensor out = te::compute(
      shapeOf({M, N}), [&](Var i, Var j) { return A(i, j) + (bcast ? B(j) : B(i, j)); }, "T_add",
      "broadcast");
  return {A, B, out};
}

} // namespace

void addElementwiseWorkloads(std::vector<Workload>& out) {
  std::vector<WorkloadParam> shape = {{"M", 128, 1, "rows"}, {"N", 128, 1, "columns"}};
  out.push_back({"relu", "T_relu[M,N] = max(A[M,N], 0)", shape, 1, relu,
                 [](const ParamMap& p) { return double(param(p, "M")) * param(p, "N"); },
                 [](const ParamMap& p, const std::vector<runtime::NDArray>& in,
                    const std::vector<runtime::NDArray>& o) {
                   View A(in[0]), C(o[0]);
                   for (int64_t i = 0; i < A.size(); ++i)
                     C.data[i] = std::max(A.data[i], 0.0f);
                 },
                 nullptr});
  std::vector<WorkloadParam> addParams = shape;
  addParams.push_back(
      {"broadcast", 1, 0, "1: B has shape (N) and is broadcast over rows; 0: B is (M,N)"});
  out.push_back({"add", "T_add[M,N] = A[M,N] + B[N] (or B[M,N] with broadcast=0)", addParams, 2,
                 add, [](const ParamMap& p) { return double(param(p, "M")) * param(p, "N"); },
                 [](const ParamMap& p, const std::vector<runtime::NDArray>& in,
                    const std::vector<runtime::NDArray>& o) {
                   int64_t M = param(p, "M"), N = param(p, "N");
                   bool bcast = param(p, "broadcast") != 0;
                   View A(in[0]), B(in[1]), C(o[0]);
                   for (int64_t i = 0; i < M; ++i)
                     for (int64_t j = 0; j < N; ++j)
                       C({i, j}) = float(double(A({i, j})) + (bcast ? B({j}) : B({i, j})));
                 },
                 nullptr});
}

} // namespace loom::topi::detail
