// loom.nd (arrays, numpy and DLPack interop), loom.build (the JIT-compiled module) and calling
// compiled kernels: the packed-call ABI driven straight from Python arguments.
#include "python/src/Runtime.h"

#include <chrono>
#include <cstring>

#include "codegen/CodeGenC.h"
#include "codegen/CodeGenLLVM.h"
#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/tir/Printer.h"
#include "core/transform/Pass.h"
#include "runtime/Module.h"
#include "runtime/RuntimeFailure.h"

namespace loom::python {

// ---- DLPack (https://dmlc.github.io/dlpack/latest/c_api.html): the ABI, declared here ----------
namespace dl {
struct DLDevice {
  int32_t device_type, device_id;
};
struct DLDataType {
  uint8_t code, bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
constexpr uint8_t kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6;
}  // namespace dl

namespace {

/// What a DLManagedTensor we export owns: a reference to the array.
struct ExportCtx {
  PyNDArray array;
};

void exportDeleter(dl::DLManagedTensor* t) {
  py::gil_scoped_acquire gil;
  delete static_cast<ExportCtx*>(t->manager_ctx);
  delete t;
}

dl::DLDataType toDL(runtime::DType t) {
  if (t.code == runtime::DType::Bool) return {dl::kDLBool, 8, 1};
  if (t.code == runtime::DType::BFloat) return {dl::kDLBfloat, t.bits, t.lanes};
  return {t.code, t.bits, t.lanes};  // int, uint and float codes agree
}

runtime::DType fromDL(dl::DLDataType t) {
  switch (t.code) {
  case dl::kDLInt: return {runtime::DType::Int, t.bits, t.lanes};
  case dl::kDLUInt: return {runtime::DType::UInt, t.bits, t.lanes};
  case dl::kDLFloat: return {runtime::DType::Float, t.bits, t.lanes};
  case dl::kDLBfloat: return {runtime::DType::BFloat, t.bits, t.lanes};
  case dl::kDLBool: return {runtime::DType::Bool, 1, t.lanes};
  }
  LOOM_THROW(TypeError) << "DLPack dtype code " << int(t.code) << " has no Loom element type";
}

py::capsule toDLPack(const PyNDArray& a) {
  auto* ctx = new ExportCtx{a};
  auto* t = new dl::DLManagedTensor{};
  t->dl_tensor.data = ctx->array.data;
  t->dl_tensor.device = {kLoomCPU, 0};
  t->dl_tensor.ndim = int32_t(ctx->array.shape.size());
  t->dl_tensor.dtype = toDL(ctx->array.dtype);
  t->dl_tensor.shape = ctx->array.shape.data();
  t->dl_tensor.strides = nullptr;
  t->dl_tensor.byte_offset = 0;
  t->manager_ctx = ctx;
  t->deleter = &exportDeleter;
  // A capsule nobody consumed (still named "dltensor") frees the tensor itself.
  return py::capsule(t, "dltensor", [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<dl::DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

/// Owns a consumed DLManagedTensor; calls its deleter when the last view of it goes.
struct ImportedDL {
  explicit ImportedDL(dl::DLManagedTensor* m) : t(m) {}
  ImportedDL(const ImportedDL&) = delete;
  ImportedDL& operator=(const ImportedDL&) = delete;
  dl::DLManagedTensor* t;
  ~ImportedDL() {
    if (t && t->deleter) t->deleter(t);
  }
};

PyNDArray fromDLPack(py::object obj) {
  py::capsule cap = py::hasattr(obj, "__dlpack__") ? obj.attr("__dlpack__")().cast<py::capsule>()
                                                   : obj.cast<py::capsule>();
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    LOOM_THROW(ValueError) << "from_dlpack: the capsule was consumed already or is not a DLPack tensor";
  auto* t = static_cast<dl::DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  const dl::DLTensor& d = t->dl_tensor;
  if (d.device.device_type != kLoomCPU) LOOM_THROW(ValueError) << "from_dlpack: only CPU tensors (device type 1), got " << d.device.device_type;
  PyNDArray a;
  a.dtype = fromDL(d.dtype);
  a.shape.assign(d.shape, d.shape + d.ndim);
  if (d.strides) {
    int64_t expect = 1;
    for (int i = d.ndim - 1; i >= 0; --i) {
      if (d.shape[i] != 1 && d.strides[i] != expect) LOOM_THROW(ValueError) << "from_dlpack: only compact row-major tensors";
      expect *= d.shape[i];
    }
  }
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  auto owner = std::make_shared<ImportedDL>(t);
  a.data = static_cast<char*>(d.data) + d.byte_offset;
  a.keepAlive = py::capsule(new std::shared_ptr<ImportedDL>(owner), [](void* p) { delete static_cast<std::shared_ptr<ImportedDL>*>(p); });
  if (reinterpret_cast<uintptr_t>(a.data) % runtime::NDArray::kAlignment != 0) {
    // Compiled kernels require aligned buffers: copy into storage Loom allocates.
    runtime::NDArray n = runtime::NDArray::empty(a.shape, a.dtype);
    std::memcpy(n.data(), a.data, a.byteSize());
    return PyNDArray::fromNDArray(n);
  }
  return a;
}

bool isAlignedCompact(const py::array& arr) {
  return (arr.flags() & py::array::c_style) && reinterpret_cast<uintptr_t>(arr.data()) % runtime::NDArray::kAlignment == 0;
}

/// The arguments of one packed call, with temporaries for numpy arrays that needed a copy.
struct PackedArgs {
  std::vector<LoomValue> values;
  std::vector<int> codes;
  std::vector<LoomTensor> tensors;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::pair<py::array, runtime::NDArray>> copyBack;
  std::vector<runtime::NDArray> temps;

  explicit PackedArgs(py::args args) {
    size_t n = args.size();
    values.resize(n);
    codes.resize(n);
    tensors.resize(n);
    shapes.resize(n);
    for (size_t i = 0; i < n; ++i) {
      py::handle h = args[i];
      if (py::isinstance<PyNDArray>(h)) {
        tensors[i] = h.cast<PyNDArray&>().view();
        values[i].v_handle = &tensors[i];
        codes[i] = kLoomArgTensor;
      } else if (py::isinstance<py::array>(h)) {
        auto arr = py::reinterpret_borrow<py::array>(h);
        runtime::DType t = dtypeOfNumpy(arr.dtype());
        shapes[i].assign(arr.shape(), arr.shape() + arr.ndim());
        void* data = const_cast<void*>(arr.data());
        if (!isAlignedCompact(arr) || !arr.writeable()) {
          PyNDArray copy = copyOfNumpy(arr);
          temps.push_back(copy.owned);
          if (arr.writeable()) copyBack.push_back({arr, copy.owned});
          data = copy.data;
        }
        tensors[i] = LoomTensor{data, {kLoomCPU, 0}, int32_t(arr.ndim()), {t.code, t.bits, t.lanes}, shapes[i].data(), nullptr, 0};
        values[i].v_handle = &tensors[i];
        codes[i] = kLoomArgTensor;
      } else if (py::isinstance<py::bool_>(h) || py::isinstance<py::int_>(h)) {
        values[i].v_int64 = h.cast<long long>();
        codes[i] = kLoomArgInt;
      } else if (py::isinstance<py::float_>(h)) {
        values[i].v_float64 = h.cast<double>();
        codes[i] = kLoomArgFloat;
      } else {
        LOOM_THROW(TypeError) << "argument " << i << ": a compiled function takes loom.nd arrays, numpy arrays, ints and floats, not "
                              << std::string(py::str(py::type::handle_of(h).attr("__name__")));
      }
    }
  }
  /// Copies results computed into temporaries back into the caller's numpy arrays.
  void finish() {
    for (auto& [arr, tmp] : copyBack) std::memcpy(arr.mutable_data(), tmp.data(), tmp.byteSize());
  }
};

/// One compiled function; keeps its module (and so its code) alive.
struct PyFunction {
  runtime::PackedFunc fn;
  runtime::Module module;

  int callRaw(PackedArgs& a) const {
    LoomValue ret{};
    int retCode = kLoomArgNull;
    int rc;
    {
      py::gil_scoped_release nogil;
      rc = fn.cfunc()(a.values.data(), a.codes.data(), int(a.values.size()), &ret, &retCode, fn.resource());
    }
    if (rc != 0) throw runtime::RuntimeFailure(fn.name() + ": " + loom_get_last_error());
    return rc;
  }
  void call(py::args args) const {
    PackedArgs a(args);
    callRaw(a);
    a.finish();
  }
};

/// A compiled module: a runtime Module (JIT or a loaded library) and, when built here, what
/// get_source and export_library regenerate code from.
struct PyModule {
  runtime::Module module;
  std::shared_ptr<codegen::JITModule> jit;
  std::vector<tir::PrimFunc> entries;  ///< make-packed-api entries
  std::vector<tir::PrimFunc> lowered;  ///< before make-packed-api
  std::string targetText;
  std::vector<std::string> names;

  PyFunction get(const std::string& name) const { return PyFunction{module.getFunction(name), module}; }
  codegen::LLVMModule rebuild(bool debugInfo) const {
    if (entries.empty()) LOOM_THROW(ValueError) << "this module was loaded from a file; its source is not available";
    codegen::CodeGenOptions cg;
    cg.debugInfo = debugInfo;
    return codegen::buildLLVM(entries, codegen::Target::parse(targetText), cg);
  }
  std::string source(const std::string& fmt) const {
    if (fmt == "ll" || fmt == "llvm") return rebuild(false).llvmIR();
    if (fmt == "asm" || fmt == "s") return rebuild(true).assembly();
    if (fmt == "c") return codegen::emitC(entries);
    if (fmt == "tir" || fmt == "lowered") {
      std::string s;
      for (auto& f : lowered) s += tir::printFunc(f);
      return s;
    }
    LOOM_THROW(ValueError) << "get_source: unknown format '" << fmt << "' (known: ll, asm, c, tir)";
  }
};

PyModule build(const tir::IRModule& mod, const std::string& target) {
  codegen::Target t = codegen::Target::parse(target);
  if (t.isGPU()) LOOM_THROW(TargetError) << "loom.build runs kernels on this machine: target '" << target << "' is a GPU target";
  if (!t.isHost()) LOOM_THROW(TargetError) << "loom.build runs kernels on this machine: target '" << target << "' is not the host";
  if (mod.functions.empty()) LOOM_THROW(ValueError) << "loom.build: the module has no functions";
  PyModule out;
  out.targetText = target;
  for (auto& [name, f] : mod.functions) {
    driver::OperatorOptions o;
    o.target = target;
    transform::PassContext ctx;
    driver::LoweredOperator op = driver::lowerOperator(f, o, ctx);
    out.entries.push_back(op.entry);
    out.lowered.push_back(op.lowered);
    out.names.push_back(f->name);
  }
  out.jit = std::make_shared<codegen::JITModule>(codegen::buildLLVM(out.entries, t));
  out.module = out.jit->asModule();
  return out;
}

}  // namespace

size_t PyNDArray::numel() const {
  size_t n = 1;
  for (int64_t s : shape) n *= size_t(s);
  return n;
}

runtime::NDArray PyNDArray::toNDArray() const {
  if (owned.defined()) return owned;
  runtime::NDArray n = runtime::NDArray::empty(shape, dtype);
  std::memcpy(n.data(), data, byteSize());
  return n;
}

PyNDArray PyNDArray::fromNDArray(const runtime::NDArray& a) {
  PyNDArray p;
  p.owned = a;
  p.data = a.data();
  p.shape = a.shape();
  p.dtype = a.dtype();
  return p;
}

runtime::DType dtypeOfNumpy(const py::dtype& d) {
  char k = d.kind();
  uint8_t bits = uint8_t(d.itemsize() * 8);
  if (k == 'f') return {runtime::DType::Float, bits, 1};
  if (k == 'i') return {runtime::DType::Int, bits, 1};
  if (k == 'u') return {runtime::DType::UInt, bits, 1};
  if (k == 'b') return {runtime::DType::Bool, 1, 1};
  LOOM_THROW(TypeError) << "numpy dtype '" << std::string(py::str(py::handle(d))) << "' has no Loom element type";
}

py::array toNumpy(const PyNDArray& a) {
  std::string name = a.dtype.str();
  py::array out(py::dtype(name), std::vector<py::ssize_t>(a.shape.begin(), a.shape.end()));
  std::memcpy(out.mutable_data(), a.data, a.byteSize());
  return out;
}

PyNDArray copyOfNumpy(const py::array& arr) {
  runtime::DType t = dtypeOfNumpy(arr.dtype());
  auto c = py::array::ensure(arr, py::array::c_style);
  std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
  runtime::NDArray n = runtime::NDArray::empty(shape, t);
  std::memcpy(n.data(), c.data(), n.byteSize());
  return PyNDArray::fromNDArray(n);
}

void bindRuntime(py::module_& m) {
  py::class_<PyNDArray>(m, "NDArray")
      .def_property_readonly("shape", [](const PyNDArray& a) { return py::tuple(py::cast(a.shape)); })
      .def_property_readonly("dtype", [](const PyNDArray& a) { return a.dtype.str(); })
      .def_property_readonly("is_view", [](const PyNDArray& a) { return !a.owned.defined(); })
      .def_property_readonly("data_ptr", [](const PyNDArray& a) { return reinterpret_cast<uintptr_t>(a.data); })
      .def("numpy", &toNumpy)
      .def("asnumpy", &toNumpy)
      .def("copyfrom", [](PyNDArray& a, py::array src) {
        if (dtypeOfNumpy(src.dtype()) != a.dtype) LOOM_THROW(TypeError) << "copyfrom: dtype " << std::string(py::str(py::handle(src.dtype()))) << " into a " << a.dtype.str() << " array";
        std::vector<int64_t> shape(src.shape(), src.shape() + src.ndim());
        if (shape != a.shape) LOOM_THROW(ValueError) << "copyfrom: shapes differ";
        auto c = py::array::ensure(src, py::array::c_style);
        std::memcpy(a.data, c.data(), a.byteSize());
      })
      .def("__dlpack__", [](const PyNDArray& a, py::object stream) { return toDLPack(a); }, py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const PyNDArray&) { return py::make_tuple(int(kLoomCPU), 0); })
      .def("__repr__", [](const PyNDArray& a) {
        std::string s = "<loom.nd.NDArray " + a.dtype.str() + "[";
        for (size_t i = 0; i < a.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape[i]);
        return s + "] on cpu(0)" + (a.owned.defined() ? "" : ", view") + ">";
      });
  m.def("nd_array", [](py::array arr, bool copy) {
    dtypeOfNumpy(arr.dtype());
    if (!copy && isAlignedCompact(arr) && arr.writeable()) {
      PyNDArray a;
      a.keepAlive = arr;
      a.data = arr.mutable_data();
      a.shape.assign(arr.shape(), arr.shape() + arr.ndim());
      a.dtype = dtypeOfNumpy(arr.dtype());
      return a;
    }
    return copyOfNumpy(arr);
  }, py::arg("array"), py::arg("copy") = false);
  m.def("nd_empty", [](std::vector<int64_t> shape, const std::string& dtype) {
    runtime::DType t;
    if (!runtime::DType::parse(dtype, &t)) LOOM_THROW(TypeError) << "'" << dtype << "' is not a dtype";
    for (int64_t s : shape)
      if (s < 0) LOOM_THROW(ValueError) << "nd.empty: negative dimension " << s;
    return PyNDArray::fromNDArray(runtime::NDArray::empty(shape, t));
  }, py::arg("shape"), py::arg("dtype") = "float32");
  m.def("from_dlpack", &fromDLPack);
  m.def("alignment", [] { return runtime::NDArray::kAlignment; });

  py::class_<PyFunction>(m, "Function")
      .def("__call__", &PyFunction::call)
      .def_property_readonly("name", [](const PyFunction& f) { return f.fn.name(); })
      .def("time", [](const PyFunction& f, int number, int repeat, double minRepeatMs, py::args args) {
        // TVM's time_evaluator: `repeat` samples, each the mean of `number` calls (raised until a
        // sample lasts min_repeat_ms); seconds per call.
        PackedArgs a(args);
        f.callRaw(a);  // warm up
        using clock = std::chrono::steady_clock;
        std::vector<double> results;
        for (int r = 0; r < repeat; ++r) {
          int n = std::max(1, number);
          for (;;) {
            auto t0 = clock::now();
            for (int i = 0; i < n; ++i) f.callRaw(a);
            double s = std::chrono::duration<double>(clock::now() - t0).count();
            if (s * 1e3 >= minRepeatMs || minRepeatMs <= 0) {
              results.push_back(s / n);
              break;
            }
            n = std::max(n * 2, int(n * (minRepeatMs / std::max(s * 1e3, 1e-3)) * 1.1));
          }
        }
        a.finish();
        return results;
      });

  py::class_<PyModule>(m, "Module")
      .def("__getitem__", &PyModule::get)
      .def("get_function", &PyModule::get)
      .def_property_readonly("function_names", [](const PyModule& mod) { return mod.names; })
      .def_property_readonly("target", [](const PyModule& mod) { return mod.targetText; })
      .def_property_readonly("type_key", [](const PyModule& mod) { return std::string(mod.module.typeKey()); })
      .def("get_source", &PyModule::source, py::arg("fmt") = "ll")
      .def("export_library", [](const PyModule& mod, const std::string& path) { mod.rebuild(false).writeSharedLibrary(path); });
  m.def("build", &build, py::arg("mod"), py::arg("target") = "llvm");
  m.def("load_module", [](const std::string& path) {
    PyModule mod;
    mod.module = runtime::Module::loadFile(path);
    return mod;
  });
}

}  // namespace loom::python
