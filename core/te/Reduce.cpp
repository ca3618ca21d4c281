// Reduction axes and the four commutative reducers.
#include "core/te/Reduce.h"

#include <limits>

#include "core/support/Error.h"

namespace loom::te {

IterVar reduceAxis(Range dom, std::string name) {
  DataType t = dom.extent.dtype();
  return IterVar(tir::makeVar(std::move(name), t), std::move(dom), tir::IterType::CommReduce);
}

IterVar reduceAxis(Expr extent, std::string name) {
  Expr zero = tir::intImm(extent.dtype(), 0);
  return reduceAxis(Range(zero, std::move(extent)), std::move(name));
}

const char* reducerName(ReducerKind k) {
  switch (k) {
  case ReducerKind::Sum:
    return "sum";
  case ReducerKind::Max:
    return "max";
  case ReducerKind::Min:
    return "min";
  case ReducerKind::Prod:
    return "prod";
  }
  return "?";
}

namespace {
/// The lowest (or highest) value of `t`: -inf/+inf for floats, the integer limits otherwise.
Expr extremeValue(DataType t, bool lowest) {
  if (t.isFloat()) {
    double inf = std::numeric_limits<double>::infinity();
    return tir::floatImm(t, lowest ? -inf : inf);
  }
  if (t.isBool()) return tir::boolImm(!lowest);
  int bits = t.bits();
  if (t.isUInt()) {
    if (lowest) return tir::intImm(t, 0);
    // Values wider than int64 cannot be held by an IntImm; uint64's highest is stored as -1.
    return tir::intImm(t, bits >= 64 ? -1 : int64_t((uint64_t(1) << bits) - 1));
  }
  if (bits >= 64)
    return tir::intImm(t, lowest ? std::numeric_limits<int64_t>::min()
                                 : std::numeric_limits<int64_t>::max());
  int64_t hi = (int64_t(1) << (bits - 1)) - 1;
  return tir::intImm(t, lowest ? -hi - 1 : hi);
}
} // namespace

Expr reducerIdentity(ReducerKind k, DataType t) {
  switch (k) {
  case ReducerKind::Sum:
    return tir::makeConst(t, 0);
  case ReducerKind::Prod:
    return tir::makeConst(t, 1);
  case ReducerKind::Max:
    return extremeValue(t, true);
  case ReducerKind::Min:
    return extremeValue(t, false);
  }
  LOOM_ICHECK(false) << "unknown reducer";
}

Expr reducerCombine(ReducerKind k, Expr acc, Expr value) {
  switch (k) {
  case ReducerKind::Sum:
    return acc + value;
  case ReducerKind::Prod:
    return acc * value;
  case ReducerKind::Max:
    return tir::max(acc, value);
  case ReducerKind::Min:
    return tir::min(acc, value);
  }
  LOOM_ICHECK(false) << "unknown reducer";
}

namespace {
Reduce makeReduce(ReducerKind k, Expr source, std::vector<IterVar> axis, Expr where) {
  if (!source.defined())
    LOOM_THROW(ValueError) << "te::" << reducerName(k) << ": undefined source expression";
  if (axis.empty())
    LOOM_THROW(ValueError) << "te::" << reducerName(k) << ": no reduction axis given";
  for (auto& a : axis)
    if (a.iterType != tir::IterType::CommReduce)
      LOOM_THROW(ValueError) << "te::" << reducerName(k) << ": axis '" << a->name
                             << "' is not a reduction axis (make it with te::reduceAxis)";
  Reduce r;
  r.kind = k;
  r.source = std::move(source);
  r.axis = std::move(axis);
  r.condition = where.defined() ? std::move(where) : tir::boolImm(true);
  return r;
}
} // namespace

Reduce sum(Expr source, std::vector<IterVar> axis, Expr where) {
  return makeReduce(ReducerKind::Sum, std::move(source), std::move(axis), std::move(where));
}
Reduce max(Expr source, std::vector<IterVar> axis, Expr where) {
  return makeReduce(ReducerKind::Max, std::move(source), std::move(axis), std::move(where));
}
Reduce min(Expr source, std::vector<IterVar> axis, Expr where) {
  return makeReduce(ReducerKind::Min, std::move(source), std::move(axis), std::move(where));
}
Reduce prod(Expr source, std::vector<IterVar> axis, Expr where) {
  return makeReduce(ReducerKind::Prod, std::move(source), std::move(axis), std::move(where));
}

} // namespace loom::te
