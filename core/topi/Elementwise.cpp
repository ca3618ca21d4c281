// relu and add (numpy broadcasting): computes and presets.
#include "core/topi/WorkloadUtil.h"

#include <algorithm>

namespace loom::topi {

using tir::Expr;
using tir::Var;

te::Tensor relu(const te::Tensor& A, std::string name) {
  Expr zero = tir::makeZero(A->dtype);
  return te::compute(
      A->shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return tir::max(A(std::vector<Expr>(i.begin(), i.end())), zero);
      },
      std::move(name), "elemwise");
}

te::Tensor add(const te::Tensor& A, const te::Tensor& B, std::string name) {
  size_t rank = std::max(A->ndim(), B->ndim());
  // Aligned from the right: dimension d of the result is dimension d - (rank - ndim) of an input.
  auto dimOf = [&](const te::Tensor& t, size_t d) -> const Expr* {
    size_t off = rank - t->ndim();
    return d < off ? nullptr : &t->shape[d - off];
  };
  auto isOne = [](const Expr* e) { return e && tir::isConstInt(*e, 1); };
  std::vector<Expr> shape;
  for (size_t d = 0; d < rank; ++d) {
    const Expr *a = dimOf(A, d), *b = dimOf(B, d);
    if (!a || (isOne(a) && b))
      shape.push_back(*b);
    else if (!b || isOne(b) || detail::sameExtent(*a, *b))
      shape.push_back(*a);
    else
      LOOM_THROW(ValueError) << "add: shapes " << detail::shapeStr(A) << " of '" << A->name
                             << "' and " << detail::shapeStr(B) << " of '" << B->name
                             << "' do not broadcast (dimension " << d << ")";
  }
  auto indexOf = [&](const te::Tensor& t, const std::vector<Var>& i) {
    std::vector<Expr> idx;
    size_t off = rank - t->ndim();
    for (size_t d = off; d < rank; ++d)
      idx.push_back(isOne(dimOf(t, d)) && !tir::isConstInt(shape[d], 1) ? Expr(0) : Expr(i[d]));
    return idx;
  };
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return A(indexOf(A, i)) + B(indexOf(B, i));
      },
      std::move(name), "broadcast");
}

namespace detail {

void addElementwiseWorkloads(std::vector<Workload>& out) {
  std::vector<WorkloadParam> shape = {{"M", 128, 1, "rows"}, {"N", 128, 1, "columns"}};
  out.push_back({"relu", "T_relu[M,N] = max(A[M,N], 0)", shape, 1,
                 [](const ParamMap& p) -> std::vector<te::Tensor> {
                   te::Tensor A = input({param(p, "M"), param(p, "N")}, "A");
                   return {A, relu(A)};
                 },
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
                 [](const ParamMap& p) -> std::vector<te::Tensor> {
                   int64_t M = param(p, "M"), N = param(p, "N");
                   te::Tensor A = input({M, N}, "A");
                   te::Tensor B = param(p, "broadcast") ? input({N}, "B") : input({M, N}, "B");
                   return {A, B, add(A, B)};
                 },
                 [](const ParamMap& p) { return double(param(p, "M")) * param(p, "N"); },
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

} // namespace detail

} // namespace loom::topi
