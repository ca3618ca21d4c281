// The extension module loom._ffi: the C++ compiler, driver and runtime behind the `loom` package.
#include "python/src/Common.h"

PYBIND11_MODULE(_ffi, m) {
  m.doc() = "Loom's C++ core (use the `loom` package, not this module)";
  loom::python::bindErrors(m);
  loom::python::bindIR(m);
  loom::python::bindSchedule(m);
  loom::python::bindRuntime(m);
  loom::python::bindModel(m);
}
