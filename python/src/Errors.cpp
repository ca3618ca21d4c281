// C++ errors as Python exceptions: every loom::Error becomes the loom.error class of its kind().
#include "codegen/CodeGenLLVM.h"
#include "codegen/SharedLibrary.h"
#include "codegen/Target.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Op.h"
#include "core/schedule/ScheduleError.h"
#include "core/support/Error.h"
#include "core/topi/Workloads.h"
#include "core/tune/CostModel.h"
#include "core/tune/Database.h"
#include "python/src/Common.h"
#include "runtime/RuntimeFailure.h"

namespace loom::python {

namespace {

/// The classes `e` is an instance of, most specific first, among those loom.error declares; the
/// Python side picks the first it knows when it does not know e.kind() itself.
py::list basesOf(const Error& e) {
  py::list out;
  auto add = [&](bool is, const char* name) {
    if (is) out.append(name);
  };
  add(dynamic_cast<const tir::ScheduleError*>(&e), "ScheduleError");
  add(dynamic_cast<const tune::RecordFileError*>(&e), "RecordFileError");
  add(dynamic_cast<const CodeGenError*>(&e), "CodeGenError");
  add(dynamic_cast<const TargetError*>(&e), "TargetError");
  add(dynamic_cast<const frontend::ImportError*>(&e), "ImportError");
  add(dynamic_cast<const ParseError*>(&e), "ParseError");
  add(dynamic_cast<const TypeError*>(&e), "TypeError");
  add(dynamic_cast<const ValueError*>(&e), "ValueError");
  add(dynamic_cast<const RuntimeError*>(&e), "RuntimeError");
  add(dynamic_cast<const UnsupportedError*>(&e), "UnsupportedError");
  add(dynamic_cast<const InternalError*>(&e), "InternalError");
  return out;
}

/// Sets the Python error made by loom.error._make(...).
void raise(const std::string& kind, py::list bases, const std::string& message, const std::string& formatted,
           const std::string& detail, const Span& span) {
  py::object make = py::module_::import("loom.error").attr("_make");
  py::object file = span.defined() ? py::object(py::str(span.fileName())) : py::object(py::none());
  py::object exc = make(kind, bases, message, formatted, detail, file, span.line, span.column);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

}  // namespace

DataType parseDType(const std::string& text) {
  std::optional<DataType> t = DataType::parse(text);
  if (!t) LOOM_THROW(TypeError) << "'" << text << "' is not a dtype (e.g. float32, int64, bool)";
  return *t;
}

void bindErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise(e.kind(), basesOf(e), e.what(), e.formatted(), e.detailedMessage(), e.span());
    } catch (const runtime::RuntimeFailure& e) {
      raise("RuntimeFailure", py::list(), e.what(), e.what(), e.what(), Span{});
    }
  });
  // For tests of the translation itself: throws the error class `kind` with `message`.
  m.def("_throw", [](const std::string& kind, const std::string& message) {
    if (kind == "ParseError") throw ParseError(message, Span{std::make_shared<const std::string>("x.tir"), 3, 7});
    if (kind == "ValueError") throw ValueError(message);
    if (kind == "RuntimeFailure") throw runtime::RuntimeFailure(message);
    if (kind == "InternalError") throw InternalError(message);
    throw Error(message);
  });
}

}  // namespace loom::python
