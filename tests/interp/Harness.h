// Small helpers shared by the interp tests: arrays, expected-error capture, one-expression programs.
#pragma once
#include <QString>

#include <cstring>
#include <functional>

#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"

namespace loom::tir::testing {

inline runtime::DType toDType(DataType t) {
  return runtime::DType{uint8_t(t.code()), uint8_t(t.bits()), uint16_t(t.lanes())};
}

inline runtime::NDArray array(std::vector<int64_t> shape, DataType t = DataType::Float(32)) {
  return runtime::NDArray::empty(std::move(shape), toDType(t));
}

inline runtime::NDArray randomArray(std::vector<int64_t> shape, uint64_t seed, DataType t = DataType::Float(32)) {
  runtime::NDArray a = array(std::move(shape), t);
  fillRandom(a, seed);
  return a;
}

/// The message of the loom::RuntimeError `f` throws; "<no error>" when it returns normally, and
/// "<other exception: ...>" for any other exception type.
inline QString runtimeErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const RuntimeError& e) {
    return QString::fromStdString(e.what());
  } catch (const std::exception& e) {
    return QString("<other exception: ") + e.what() + ">";
  }
  return "<no error>";
}

/// Runs a program storing `value` into out[0] (a one-element buffer of value's type), with the
/// given scalar params bound to `args`; returns the output array.
inline runtime::NDArray runExpr(const Expr& value, const std::vector<Var>& params = {},
                                const std::vector<Arg>& args = {}) {
  Buffer out = makeBuffer("out", value.dtype().element(), {value.dtype().lanes()});
  std::vector<Var> ps = params;
  ps.push_back(out->data);
  Stmt body = value.dtype().lanes() == 1 ? bufferStore(out, value, {0})
                                         : bufferStore(out, value, {ramp(0, 1, value.dtype().lanes())});
  PrimFunc f = makePrimFunc("expr", ps, {{out->data, out}}, body);
  runtime::NDArray o = array({value.dtype().lanes()}, value.dtype().element());
  std::vector<Arg> as = args;
  as.push_back(o);
  interpret(f, as);
  return o;
}

/// The raw bits of element i of a 1-D array (for exact integer and float checks).
template <class T> T rawAt(const runtime::NDArray& a, int64_t i = 0) {
  T v;
  std::memcpy(&v, static_cast<const char*>(a.data()) + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace loom::tir::testing
