// Shared declarations of the loom._ffi extension: one bind function per area, value conversions.
#pragma once
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "core/ir/DataType.h"

namespace loom::python {

namespace py = pybind11;

void bindErrors(py::module_& m);
void bindIR(py::module_& m);
void bindSchedule(py::module_& m);
void bindRuntime(py::module_& m);
void bindModel(py::module_& m);

/// "float32" -> DataType; TypeError naming the text when it is not a dtype.
DataType parseDType(const std::string& text);

}  // namespace loom::python
