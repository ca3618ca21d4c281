// Shared helpers of the graph op computes (nn/*.cpp): shapes, broadcasting loads, registration.
#pragma once
#include <string>
#include <vector>

#include "core/graph/Op.h"
#include "core/graph/Type.h"
#include "core/te/Tensor.h"
#include "core/tir/Op.h"

namespace loom::topi::nn {

using tir::Expr;
using tir::Var;

/// The tensor type `t` (UnsupportedError for tuples and for unknown `?` dims; symbolic dims are
/// fine: teShape gives them as expressions).
const graph::TensorTypeNode& staticTensor(const graph::Type& t, const graph::CallNode& call);
/// The shape of a tensor type as int32 index expressions: constants for static dims, expressions
/// over symbolIndexVar for symbolic ones.
std::vector<Expr> teShape(const graph::TensorTypeNode& t);
/// The int32 variable a kernel uses for graph symbol `name` (one per name, process-wide; each
/// kernel binds it from the shape of an argument).
Var symbolIndexVar(const std::string& name);
/// A symbolic dim as an int32 index expression over symbolIndexVar.
Expr indexExprOfDim(const graph::Dim& d);
/// The static extents of a te::Tensor.
std::vector<int64_t> extents(const te::Tensor& t);
/// Its extents with -1 where a dim is symbolic (never taken for a broadcast 1).
std::vector<int64_t> extentsOrSymbolic(const te::Tensor& t);
inline Expr ci(int64_t v) { return tir::intImm(DataType::Int(32), v); }
inline std::vector<Expr> exprs(const std::vector<Var>& v) { return std::vector<Expr>(v.begin(), v.end()); }
/// `t` loaded at the output index `i` with numpy broadcasting (dims aligned from the right; an
/// extent-1 dim reads index 0).
Expr broadcastLoad(const te::Tensor& t, const std::vector<Var>& i);
/// The same for an operand of an op whose output is the broadcast of `operands`: a dim of extent
/// 1 in the output keeps its (single-valued) index var, so consumers of the result see plain iter
/// var indices (compute_at / reverse_compute_at need them).
Expr broadcastLoad(const te::Tensor& t, const std::vector<Var>& i, const std::vector<te::Tensor>& operands);
/// The product of extents with the static ones folded: a constant when every one is static.
Expr extentProduct(const std::vector<Expr>& extents);
/// An extent as a value of type `t` (a divisor): a constant when static, else a cast.
Expr extentValue(DataType t, const Expr& n);
/// The type a sum of `count` elements of type `t` accumulates in: float64 for a float32 sum of
/// at least 4096 elements or of a symbolic count, else `t`. Added one after another in float32,
/// 50176 elements (an InstanceNorm's mean and variance over a 224x224 map) lost 4e-5 of the
/// variance, 17x ORT's error; below 4096 the error (count * 2^-24 at worst) stays under 2.5e-4
/// of the sum and the kernel keeps float32 lanes. The graph evaluator sums in double too.
DataType sumAccumulator(DataType t, const Expr& count);
/// `v` clamped to [0, n - 1] for an extent `n`, static or symbolic.
inline Expr clampToExtent(Expr v, const Expr& n) {
  const int64_t* k = tir::asConstInt(n);
  return tir::min(tir::max(std::move(v), ci(0)), k ? ci(*k - 1) : n - ci(1));
}
/// `v` clamped to [lo, hi].
inline Expr clampIndex(Expr v, int64_t lo, int64_t hi) { return tir::min(tir::max(v, ci(lo)), ci(hi)); }
/// Normalizes a possibly negative axis.
int64_t normAxis(int64_t axis, int64_t ndim);
/// Registers `f` as op `name`'s compute (the op must exist).
void setCompute(const std::string& name, graph::TECompute f);
/// A single-output compute body over the output type's shape.
using Body = std::function<Expr(const graph::CallNode& call, const std::vector<te::Tensor>& in,
                                const std::vector<Var>& i)>;
void setSimple(const std::string& name, Body body, std::string tag);

void registerElemwiseComputes();
void registerNNComputes();
void registerWinogradComputes();
void registerTransformComputes();
void registerReduceComputes();
void registerScatterComputes();  // Scatter.cpp
void registerImageComputes();    // Image.cpp
void registerQnnDot4Computes();  // QnnDot4.cpp
/// The float64 input coordinate of output index `o` under ONNX Resize's coordinate_transformation_mode
/// (Transform.cpp; givenScale 0: out/in).
Expr resizeCoordinate(const std::string& mode, Expr o, int64_t inLen, int64_t outLen, double givenScale);

}  // namespace loom::topi::nn
