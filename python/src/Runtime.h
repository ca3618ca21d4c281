// loom.nd arrays and compiled modules as Python sees them (shared by Runtime.cpp and Model.cpp).
#pragma once
#include <pybind11/numpy.h>

#include <memory>
#include <vector>

#include "python/src/Common.h"
#include "runtime/NDArray.h"
#include "runtime/include/loom/c_runtime_api.h"

namespace loom::python {

/// loom.nd.NDArray: a runtime NDArray (aligned storage it owns) or a zero-copy view of memory some
/// Python object owns (a numpy array, a DLPack producer), kept alive while the view lives.
struct PyNDArray {
  runtime::NDArray owned;    ///< defined when the array owns its storage
  py::object keepAlive;      ///< the owner of a view's memory
  void* data = nullptr;
  std::vector<int64_t> shape;
  runtime::DType dtype;

  size_t numel() const;
  size_t byteSize() const { return numel() * dtype.bytes(); }
  LoomTensor view() {
    return LoomTensor{data, {kLoomCPU, 0}, int32_t(shape.size()),
                      {dtype.code, dtype.bits, dtype.lanes}, shape.data(), nullptr, 0};
  }
  /// The array as a runtime NDArray (a copy for a view).
  runtime::NDArray toNDArray() const;
  static PyNDArray fromNDArray(const runtime::NDArray& a);
};

/// The numpy dtype's Loom element type; TypeError for one Loom has no counterpart of.
runtime::DType dtypeOfNumpy(const py::dtype& d);
/// A new numpy array holding a copy of `a`.
py::array toNumpy(const PyNDArray& a);
/// A copy of `arr` (any layout) in storage Loom allocates.
PyNDArray copyOfNumpy(const py::array& arr);

}  // namespace loom::python
