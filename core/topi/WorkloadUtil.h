// Helpers shared by the workload families (not part of the topi API): parameter access, index
// arithmetic that skips `* 1` and `+ 0`, and element access for the C++ references.
#pragma once
#include <vector>

#include "core/tir/Op.h"
#include "core/topi/Ops.h"
#include "core/topi/Workloads.h"

namespace loom::topi::detail {

using tir::Expr;
using tir::Var;

/// Parameter `name` of a complete map (an ICHECK: parseWorkloadSpec fills every parameter).
int64_t param(const ParamMap& p, const char* name);
/// An int32 immediate.
inline Expr c32(int64_t v) {
  return tir::intImm(DataType::Int(32), v);
}
/// `e * c`, or `e` when c == 1.
Expr mulC(const Expr& e, int64_t c);
/// `e + c`, or `e` when c == 0 (`e - |c|` for negative c).
Expr addC(const Expr& e, int64_t c);
/// A float32 placeholder of constant shape.
te::Tensor input(std::vector<int64_t> shape, const char* name);
std::vector<Expr> shapeOf(const std::vector<int64_t>& dims);
/// "(4, n, 8)": a tensor's shape for messages.
std::string shapeStr(const te::Tensor& t);
/// Throws ValueError naming `op` unless `t` has rank `rank`.
void checkRank(const te::Tensor& t, size_t rank, const char* op);
/// Dimension `d` of `t` as a constant; throws ValueError naming `op` when it is symbolic.
int64_t constDim(const te::Tensor& t, size_t d, const char* op);
/// True when the two extents are the same constant or the same expression node.
bool sameExtent(const Expr& a, const Expr& b);

/// Row-major float32 view of an NDArray for the references.
struct View {
  float* data;
  std::vector<int64_t> shape;
  explicit View(const runtime::NDArray& a);
  float& operator()(std::initializer_list<int64_t> idx) const;
  int64_t size() const;
};

/// The references' family registrations (one per file).
void addMatmulWorkloads(std::vector<Workload>& out);
void addConv2dWorkloads(std::vector<Workload>& out);
void addElementwiseWorkloads(std::vector<Workload>& out);
void addReductionWorkloads(std::vector<Workload>& out);
void addSoftmaxWorkloads(std::vector<Workload>& out);
void addLayernormWorkloads(std::vector<Workload>& out);
void addTransposeWorkloads(std::vector<Workload>& out);

} // namespace loom::topi::detail
