// Python-side wrappers of IR handles: PrimExpr, Var and IterVar (one class chain, like TVM's).
#pragma once
#include "core/te/Reduce.h"
#include "core/tir/Expr.h"
#include "python/src/Common.h"

namespace loom::python {

struct PyExpr {
  tir::Expr expr;
  virtual ~PyExpr() = default;
};
struct PyVar : PyExpr {
  tir::Var var;
};
struct PyIterVar : PyVar {
  te::IterVar iv;
};

/// A Python number, bool or PrimExpr as an expression (ints are int32 unless they need 64 bits).
tir::Expr toExpr(py::handle h);
py::object wrapExpr(const tir::Expr& e);
py::object wrapVar(const tir::Var& v);
py::object wrapIterVar(const te::IterVar& iv);

}  // namespace loom::python
