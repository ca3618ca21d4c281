// Reduction axes and commutative reductions (sum, max, min, prod) of tensor expressions.
#pragma once
#include <string>
#include <vector>

#include "core/tir/Op.h"

namespace loom::te {

using tir::Expr;
using tir::Range;
using tir::Var;

/// An axis of a compute: a variable with its domain. It *is* the variable (a tir::Var handle), so
/// it can be used in index expressions directly: `A(i, k)`, `k * 2 + 1`.
class IterVar : public tir::Var {
public:
  IterVar() = default;
  IterVar(tir::Var v, Range d, tir::IterType t)
      : tir::Var(std::move(v)), dom(std::move(d)), iterType(t) {}
  const tir::Var& var() const { return *this; }
  Range dom;
  tir::IterType iterType = tir::IterType::DataPar;
};

/// A reduction axis over `dom` ("rk", "rc", ...); it becomes a `T.axis.reduce` iter var.
IterVar reduceAxis(Range dom, std::string name = "k");
/// A reduction axis over [0, extent).
IterVar reduceAxis(Expr extent, std::string name = "k");

/// A commutative, associative combiner with its identity element.
enum class ReducerKind { Sum, Max, Min, Prod };
const char* reducerName(ReducerKind k);
/// The identity of `k` in type `t`: 0, lowest (-inf for floats), highest (+inf for floats), 1.
Expr reducerIdentity(ReducerKind k, DataType t);
/// `acc (+|max|min|*) value`.
Expr reducerCombine(ReducerKind k, Expr acc, Expr value);

/// How a reduction is represented. TIR has no Reduce node, so a reduction is never an Expr: it is
/// this description, which only `compute` accepts as the *whole* body of a compute (as in TVM,
/// a reduction cannot be nested inside a larger expression; write a second compute instead).
/// `createPrimFunc` turns it into a block with `init` (store the identity) and the update
/// `out[...] = combine(out[...], source)`, guarded by `condition` when it is not `true`.
struct Reduce {
  ReducerKind kind = ReducerKind::Sum;
  Expr source;
  std::vector<IterVar> axis;
  Expr condition; ///< bool; `true` when every point of the axes takes part
};

/// sum / max / min / product of `source` over `axis`, counting only points where `where` holds.
Reduce sum(Expr source, std::vector<IterVar> axis, Expr where = Expr());
Reduce max(Expr source, std::vector<IterVar> axis, Expr where = Expr());
Reduce min(Expr source, std::vector<IterVar> axis, Expr where = Expr());
Reduce prod(Expr source, std::vector<IterVar> axis, Expr where = Expr());

} // namespace loom::te
