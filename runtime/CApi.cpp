// The application C API (loom_runtime.h) over NDArray, Module and PackedFunc.
#include "loom_runtime.h"

#include <string>

#include "runtime/LastError.h"
#include "runtime/Module.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/ThreadPool.h"

using namespace loom::runtime;

struct LoomNDArray {
  NDArray array;
  LoomTensor view;
};
struct LoomModule {
  Module module;
  std::optional<std::string> meta;
};
struct LoomFunction {
  PackedFunc func;
  std::string lastString;
};

namespace {
template <class T> void requireOut(T* out, const char* what) {
  if (!out) throw RuntimeFailure(std::string("null ") + what);
}
}  // namespace

extern "C" {

int loom_ndarray_empty(const int64_t* shape, int ndim, LoomDataType dtype, LoomDevice device,
                       LoomNDArrayHandle* out) {
  return guardCall("loom_ndarray_empty", [&] {
    requireOut(out, "output handle");
    if (ndim < 0 || (ndim > 0 && !shape)) throw RuntimeFailure("bad shape (ndim " + std::to_string(ndim) + ")");
    auto* h = new LoomNDArray;
    try {
      h->array = NDArray::empty(std::vector<int64_t>(shape, shape + ndim),
                                DType{dtype.code, dtype.bits, dtype.lanes},
                                Device{DeviceType(device.device_type), device.device_id});
      h->view = tensorView(h->array);
    } catch (...) {
      delete h;
      throw;
    }
    *out = h;
    return 0;
  });
}

int loom_ndarray_free(LoomNDArrayHandle array) {
  delete array;
  return 0;
}

int loom_ndarray_copy(LoomNDArrayHandle array, LoomNDArrayHandle* out) {
  return guardCall("loom_ndarray_copy", [&] {
    requireOut(array, "array");
    requireOut(out, "output handle");
    auto* h = new LoomNDArray;
    try {
      h->array = array->array.copy();
      h->view = tensorView(h->array);
    } catch (...) {
      delete h;
      throw;
    }
    *out = h;
    return 0;
  });
}

int loom_ndarray_copy_from_bytes(LoomNDArrayHandle array, const void* data, size_t nbytes) {
  return guardCall("loom_ndarray_copy_from_bytes", [&] {
    requireOut(array, "array");
    if (!data && nbytes) throw RuntimeFailure("null data");
    array->array.copyFromBytes(data, nbytes);
    return 0;
  });
}

int loom_ndarray_copy_to_bytes(LoomNDArrayHandle array, void* data, size_t nbytes) {
  return guardCall("loom_ndarray_copy_to_bytes", [&] {
    requireOut(array, "array");
    if (!data && nbytes) throw RuntimeFailure("null data");
    array->array.copyToBytes(data, nbytes);
    return 0;
  });
}

LoomTensor* loom_ndarray_tensor(LoomNDArrayHandle array) { return array ? &array->view : nullptr; }

int loom_module_load(const char* path, LoomModuleHandle* out) {
  return guardCall("loom_module_load", [&] {
    requireOut(path, "path");
    requireOut(out, "output handle");
    Module m = Module::loadFile(path);
    *out = new LoomModule{m, m.meta()};
    return 0;
  });
}

int loom_module_free(LoomModuleHandle module) {
  delete module;
  return 0;
}

const char* loom_module_meta(LoomModuleHandle module) {
  return module && module->meta ? module->meta->c_str() : nullptr;
}

int loom_module_get_function(LoomModuleHandle module, const char* name, LoomFunctionHandle* out) {
  return guardCall("loom_module_get_function", [&] {
    requireOut(module, "module");
    requireOut(name, "name");
    requireOut(out, "output handle");
    *out = new LoomFunction{module->module.getFunction(name), {}};
    return 0;
  });
}

int loom_function_free(LoomFunctionHandle func) {
  delete func;
  return 0;
}

int loom_function_call(LoomFunctionHandle func, LoomValue* args, int* type_codes, int num_args,
                       LoomValue* ret, int* ret_type_code) {
  if (!func) {
    setLastError("loom_function_call: null function");
    return -1;
  }
  if (num_args < 0 || (num_args > 0 && (!args || !type_codes))) {
    setLastError("loom_function_call: bad argument list");
    return -1;
  }
  LoomValue value;
  value.v_handle = nullptr;
  int code = kLoomArgNull;
  clearLastError();
  int rc = func->func.cfunc()(args, type_codes, num_args, &value, &code, func->func.resource());
  if (rc != 0) {
    if (lastError().empty())
      setLastError(func->func.name() + ": returned " + std::to_string(rc) + " without a message");
    else
      setLastError(func->func.name() + ": " + lastError());
    return -1;
  }
  if (code == kLoomArgStr) {
    func->lastString = value.v_str ? value.v_str : "";
    value.v_str = func->lastString.c_str();
  }
  if (ret) *ret = value;
  if (ret_type_code) *ret_type_code = code;
  return 0;
}

int loom_runtime_num_threads(void) { return ThreadPool::global().numThreads(); }

}  // extern "C"
