// The C API of packaged models (loom_package_* in loom_runtime.h) over loadPackage and GraphExecutor.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "loom_runtime.h"
#include "runtime/LastError.h"
#include "runtime/Package.h"
#include "runtime/RuntimeFailure.h"

using namespace loom::runtime;

struct LoomPackage {
  Package package;
  std::string path;
  // Shapes kept here so the pointers handed out stay valid while the handle lives.
  std::vector<std::vector<int64_t>> inputShapes, outputShapes;
  std::string dimText;  // loom_package_input_dim's last answer
};

namespace {

template <class T> void require(T* p, const char* what) {
  if (!p) throw RuntimeFailure(std::string("null ") + what);
}

GraphExecutor& exec(LoomPackageHandle pkg) {
  require(pkg, "package");
  return *pkg->package.executor;
}

size_t checkIndex(int index, size_t count, const char* what) {
  if (index < 0 || size_t(index) >= count)
    throw RuntimeFailure(std::string(what) + " index " + std::to_string(index) + " out of range (the model has " +
                         std::to_string(count) + " " + what + (count == 1 ? "" : "s") + ")");
  return size_t(index);
}

size_t byteSize(const std::vector<int64_t>& shape, DType dt) {
  size_t n = dt.bytes();
  for (int64_t d : shape) n *= size_t(d);
  return n;
}

std::string describe(const std::vector<int64_t>& shape, DType dt) {
  std::string r = dt.str() + "[";
  for (size_t i = 0; i < shape.size(); ++i) r += (i ? ", " : "") + std::to_string(shape[i]);
  return r + "]";
}

LoomDataType toC(DType d) { return LoomDataType{d.code, d.bits, d.lanes}; }

void setInputBytes(LoomPackageHandle pkg, size_t i, const void* data, size_t nbytes,
                   const std::vector<int64_t>* given = nullptr) {
  GraphExecutor& ex = exec(pkg);
  std::vector<int64_t> shape = given ? *given : ex.inputShape(i);
  DType dt = ex.inputDType(i);
  if (given && !ex.isDynamic() && shape != ex.inputShape(i))
    throw RuntimeFailure("input '" + ex.inputName(i) + "' expects " + describe(ex.inputShape(i), dt) + ", got the shape " +
                         describe(shape, dt) + " (the package is static)");
  size_t want = byteSize(shape, dt);
  if (nbytes != want)
    throw RuntimeFailure("input '" + ex.inputName(i) + "' expects " + describe(shape, dt) + " = " + std::to_string(want) +
                         " bytes, got " + std::to_string(nbytes) + " bytes");
  if (!data && nbytes) throw RuntimeFailure("null data for input '" + ex.inputName(i) + "'");
  NDArray a = NDArray::empty(shape, dt);
  if (nbytes) a.copyFromBytes(data, nbytes);
  ex.setInput(i, a);
}

}  // namespace

extern "C" {

int loom_package_load(const char* path, LoomPackageHandle* out) {
  return guardCall("loom_package_load", [&] {
    require(path, "path");
    require(out, "output handle");
    *out = nullptr;
    auto* h = new LoomPackage{loadPackage(path), path, {}, {}, {}};
    GraphExecutor& ex = *h->package.executor;
    for (size_t i = 0; i < ex.numInputs(); ++i) h->inputShapes.push_back(ex.inputShape(i));
    for (size_t i = 0; i < ex.numOutputs(); ++i) h->outputShapes.push_back(ex.outputShape(i));
    *out = h;
    return 0;
  });
}

int loom_package_free(LoomPackageHandle pkg) {
  delete pkg;
  return 0;
}

int loom_package_metadata(LoomPackageHandle pkg, const char** out) {
  return guardCall("loom_package_metadata", [&] {
    require(pkg, "package");
    require(out, "output");
    *out = pkg->package.metadata.c_str();
    return 0;
  });
}

int loom_package_num_inputs(LoomPackageHandle pkg, int* out) {
  return guardCall("loom_package_num_inputs", [&] {
    require(out, "output");
    *out = int(exec(pkg).numInputs());
    return 0;
  });
}

int loom_package_num_outputs(LoomPackageHandle pkg, int* out) {
  return guardCall("loom_package_num_outputs", [&] {
    require(out, "output");
    *out = int(exec(pkg).numOutputs());
    return 0;
  });
}

int loom_package_input_name(LoomPackageHandle pkg, int index, const char** out) {
  return guardCall("loom_package_input_name", [&] {
    require(out, "output");
    GraphExecutor& ex = exec(pkg);
    *out = ex.inputName(checkIndex(index, ex.numInputs(), "input")).c_str();
    return 0;
  });
}

int loom_package_output_name(LoomPackageHandle pkg, int index, const char** out) {
  return guardCall("loom_package_output_name", [&] {
    require(out, "output");
    GraphExecutor& ex = exec(pkg);
    *out = ex.outputName(checkIndex(index, ex.numOutputs(), "output")).c_str();
    return 0;
  });
}

int loom_package_input_index(LoomPackageHandle pkg, const char* name, int* out) {
  return guardCall("loom_package_input_index", [&] {
    require(name, "name");
    require(out, "output");
    *out = int(exec(pkg).inputIndex(name));
    return 0;
  });
}

int loom_package_output_index(LoomPackageHandle pkg, const char* name, int* out) {
  return guardCall("loom_package_output_index", [&] {
    require(name, "name");
    require(out, "output");
    *out = int(exec(pkg).outputIndex(name));
    return 0;
  });
}

int loom_package_input_shape(LoomPackageHandle pkg, int index, const int64_t** shape, int* ndim) {
  return guardCall("loom_package_input_shape", [&] {
    require(shape, "shape output");
    require(ndim, "ndim output");
    size_t i = checkIndex(index, exec(pkg).numInputs(), "input");
    auto& s = pkg->inputShapes[i];
    s = exec(pkg).inputShape(i);
    *shape = s.data();
    *ndim = int(s.size());
    return 0;
  });
}

int loom_package_output_shape(LoomPackageHandle pkg, int index, const int64_t** shape, int* ndim) {
  return guardCall("loom_package_output_shape", [&] {
    require(shape, "shape output");
    require(ndim, "ndim output");
    size_t i = checkIndex(index, exec(pkg).numOutputs(), "output");
    auto& s = pkg->outputShapes[i];
    s = exec(pkg).outputShape(i);
    *shape = s.data();
    *ndim = int(s.size());
    return 0;
  });
}

int loom_package_input_dtype(LoomPackageHandle pkg, int index, LoomDataType* out) {
  return guardCall("loom_package_input_dtype", [&] {
    require(out, "output");
    GraphExecutor& ex = exec(pkg);
    *out = toC(ex.inputDType(checkIndex(index, ex.numInputs(), "input")));
    return 0;
  });
}

int loom_package_output_dtype(LoomPackageHandle pkg, int index, LoomDataType* out) {
  return guardCall("loom_package_output_dtype", [&] {
    require(out, "output");
    GraphExecutor& ex = exec(pkg);
    *out = toC(ex.outputDType(checkIndex(index, ex.numOutputs(), "output")));
    return 0;
  });
}

int loom_package_input_nbytes(LoomPackageHandle pkg, int index, size_t* out) {
  return guardCall("loom_package_input_nbytes", [&] {
    require(out, "output");
    GraphExecutor& ex = exec(pkg);
    size_t i = checkIndex(index, ex.numInputs(), "input");
    *out = byteSize(ex.inputShape(i), ex.inputDType(i));
    return 0;
  });
}

int loom_package_output_nbytes(LoomPackageHandle pkg, int index, size_t* out) {
  return guardCall("loom_package_output_nbytes", [&] {
    require(out, "output");
    GraphExecutor& ex = exec(pkg);
    size_t i = checkIndex(index, ex.numOutputs(), "output");
    *out = byteSize(ex.outputShape(i), ex.outputDType(i));
    return 0;
  });
}

int loom_package_set_input(LoomPackageHandle pkg, int index, const void* data, size_t nbytes) {
  return guardCall("loom_package_set_input", [&] {
    setInputBytes(pkg, checkIndex(index, exec(pkg).numInputs(), "input"), data, nbytes);
    return 0;
  });
}

int loom_package_set_input_by_name(LoomPackageHandle pkg, const char* name, const void* data, size_t nbytes) {
  return guardCall("loom_package_set_input_by_name", [&] {
    require(name, "name");
    setInputBytes(pkg, exec(pkg).inputIndex(name), data, nbytes);
    return 0;
  });
}

int loom_package_set_input_tensor(LoomPackageHandle pkg, int index, const LoomTensor* tensor) {
  return guardCall("loom_package_set_input_tensor", [&] {
    require(tensor, "tensor");
    GraphExecutor& ex = exec(pkg);
    size_t i = checkIndex(index, ex.numInputs(), "input");
    if (tensor->device.device_type != kLoomCPU)
      throw RuntimeFailure("input '" + ex.inputName(i) + "': the tensor is not on the CPU (device type " +
                           std::to_string(tensor->device.device_type) + ")");
    if (tensor->ndim < 0 || (tensor->ndim > 0 && !tensor->shape))
      throw RuntimeFailure("input '" + ex.inputName(i) + "': the tensor has a bad shape (ndim " +
                           std::to_string(tensor->ndim) + ")");
    std::vector<int64_t> shape(tensor->shape, tensor->shape + tensor->ndim);
    DType dt{tensor->dtype.code, tensor->dtype.bits, tensor->dtype.lanes};
    std::vector<int64_t> want = ex.isDynamic() ? shape : ex.inputShape(i);
    DType wantDt = ex.inputDType(i);
    if (shape != want || !(dt == wantDt))
      throw RuntimeFailure("input '" + ex.inputName(i) + "' expects " + describe(want, wantDt) + ", got " +
                           describe(shape, dt));
    if (tensor->strides) {
      int64_t expect = 1;
      for (int d = tensor->ndim - 1; d >= 0; --d) {
        if (shape[size_t(d)] != 1 && tensor->strides[d] != expect)
          throw RuntimeFailure("input '" + ex.inputName(i) + "': the tensor is not compact row-major");
        expect *= shape[size_t(d)];
      }
    }
    setInputBytes(pkg, i, static_cast<const char*>(tensor->data) + tensor->byte_offset, byteSize(want, wantDt), &want);
    return 0;
  });
}

int loom_package_set_input_shaped(LoomPackageHandle pkg, int index, const void* data, size_t nbytes,
                                  const int64_t* shape, int ndim) {
  return guardCall("loom_package_set_input_shaped", [&] {
    size_t i = checkIndex(index, exec(pkg).numInputs(), "input");
    if (ndim < 0 || (ndim > 0 && !shape))
      throw RuntimeFailure("input '" + exec(pkg).inputName(i) + "': bad shape (ndim " + std::to_string(ndim) + ")");
    std::vector<int64_t> s(shape, shape + ndim);
    for (int k = 0; k < ndim; ++k)
      if (s[size_t(k)] < 0)
        throw RuntimeFailure("input '" + exec(pkg).inputName(i) + "': dimension " + std::to_string(k) + " is negative (" +
                             std::to_string(s[size_t(k)]) + ")");
    setInputBytes(pkg, i, data, nbytes, &s);
    return 0;
  });
}

int loom_package_is_dynamic(LoomPackageHandle pkg, int* out) {
  return guardCall("loom_package_is_dynamic", [&] {
    require(out, "output");
    *out = exec(pkg).isDynamic() ? 1 : 0;
    return 0;
  });
}

int loom_package_input_dim(LoomPackageHandle pkg, int index, int axis, const char** text, int64_t* bound) {
  return guardCall("loom_package_input_dim", [&] {
    require(text, "text output");
    GraphExecutor& ex = exec(pkg);
    size_t i = checkIndex(index, ex.numInputs(), "input");
    std::vector<std::string> dims = ex.inputDims(i);
    if (axis < 0 || size_t(axis) >= dims.size())
      throw RuntimeFailure("input '" + ex.inputName(i) + "': axis " + std::to_string(axis) + " out of range (rank " +
                           std::to_string(dims.size()) + ")");
    pkg->dimText = dims[size_t(axis)];
    *text = pkg->dimText.c_str();
    if (bound) {
      std::map<std::string, int64_t> b = ex.symbolBounds();
      auto it = b.find(pkg->dimText);
      *bound = it == b.end() ? -1 : it->second;
    }
    return 0;
  });
}

int loom_package_run(LoomPackageHandle pkg) {
  return guardCall("loom_package_run", [&] {
    exec(pkg).run();
    return 0;
  });
}

int loom_package_get_output(LoomPackageHandle pkg, int index, void* buf, size_t nbytes) {
  return guardCall("loom_package_get_output", [&] {
    GraphExecutor& ex = exec(pkg);
    size_t i = checkIndex(index, ex.numOutputs(), "output");
    std::vector<int64_t> shape = ex.outputShape(i);
    DType dt = ex.outputDType(i);
    size_t want = byteSize(shape, dt);
    if (nbytes != want)
      throw RuntimeFailure("output '" + ex.outputName(i) + "' is " + describe(shape, dt) + " = " + std::to_string(want) +
                           " bytes, the buffer has " + std::to_string(nbytes) + " bytes");
    if (!buf && nbytes) throw RuntimeFailure("null buffer for output '" + ex.outputName(i) + "'");
    NDArray a = ex.getOutput(i);
    if (nbytes) a.copyToBytes(buf, nbytes);
    return 0;
  });
}

}  // extern "C"
