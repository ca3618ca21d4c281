// C++ wrapper over loom_runtime.h: owning handles that throw loom::rt::Error on failure.
#pragma once
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "loom_runtime.h"

namespace loom::rt {

/// A failed runtime call; what() is loom_get_last_error() of the call.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

inline void check(int rc) {
  if (rc != 0) throw Error(loom_get_last_error());
}

/// An owned array.
class Tensor {
public:
  Tensor(std::vector<int64_t> shape, LoomDataType dtype, LoomDevice device = {kLoomCPU, 0}) {
    check(loom_ndarray_empty(shape.data(), int(shape.size()), dtype, device, &m_handle));
  }
  Tensor(Tensor&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  Tensor& operator=(Tensor&& other) noexcept {
    std::swap(m_handle, other.m_handle);
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { loom_ndarray_free(m_handle); }

  LoomTensor* view() const { return loom_ndarray_tensor(m_handle); }
  template <class T> T* data() const { return static_cast<T*>(view()->data); }
  std::vector<int64_t> shape() const { return {view()->shape, view()->shape + view()->ndim}; }
  Tensor copy() const {
    LoomNDArrayHandle h = nullptr;
    check(loom_ndarray_copy(m_handle, &h));
    return Tensor(h);
  }
  void copyFrom(const void* bytes, size_t n) { check(loom_ndarray_copy_from_bytes(m_handle, bytes, n)); }
  void copyTo(void* bytes, size_t n) const { check(loom_ndarray_copy_to_bytes(m_handle, bytes, n)); }
  LoomNDArrayHandle handle() const { return m_handle; }

private:
  explicit Tensor(LoomNDArrayHandle h) : m_handle(h) {}
  LoomNDArrayHandle m_handle = nullptr;
};

/// One argument of Function::operator().
struct Arg {
  Arg(int64_t v) : code(kLoomArgInt) { value.v_int64 = v; }
  Arg(int v) : Arg(int64_t(v)) {}
  Arg(double v) : code(kLoomArgFloat) { value.v_float64 = v; }
  Arg(const char* s) : code(kLoomArgStr) { value.v_str = s; }
  Arg(const std::string& s) : Arg(s.c_str()) {}
  Arg(const Tensor& t) : code(kLoomArgTensor) { value.v_handle = t.view(); }
  Arg(void* h) : code(kLoomArgHandle) { value.v_handle = h; }
  Arg(std::nullptr_t) : code(kLoomArgNull) { value.v_handle = nullptr; }
  LoomValue value;
  int code;
};

/// A function of a module; keeps the module loaded.
class Function {
public:
  Function(Function&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  Function& operator=(Function&& other) noexcept {
    std::swap(m_handle, other.m_handle);
    return *this;
  }
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;
  ~Function() { loom_function_free(m_handle); }

  /// Calls with `args`; returns the result value and sets `*retCode` when given.
  LoomValue operator()(std::initializer_list<Arg> args, int* retCode = nullptr) const {
    std::vector<LoomValue> values;
    std::vector<int> codes;
    for (const Arg& a : args) {
      values.push_back(a.value);
      codes.push_back(a.code);
    }
    LoomValue ret;
    int code = kLoomArgNull;
    check(loom_function_call(m_handle, values.data(), codes.data(), int(values.size()), &ret, &code));
    if (retCode) *retCode = code;
    return ret;
  }

private:
  friend class Module;
  explicit Function(LoomFunctionHandle h) : m_handle(h) {}
  LoomFunctionHandle m_handle = nullptr;
};

/// A loaded module.
class Module {
public:
  explicit Module(const std::string& path) { check(loom_module_load(path.c_str(), &m_handle)); }
  Module(Module&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  Module& operator=(Module&& other) noexcept {
    std::swap(m_handle, other.m_handle);
    return *this;
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() { loom_module_free(m_handle); }

  Function function(const std::string& name) const {
    LoomFunctionHandle f = nullptr;
    check(loom_module_get_function(m_handle, name.c_str(), &f));
    return Function(f);
  }
  /// The metadata text, "" when the module has none.
  std::string meta() const {
    const char* m = loom_module_meta(m_handle);
    return m ? m : "";
  }

private:
  LoomModuleHandle m_handle = nullptr;
};

/// A loaded package (`loom compile`'s NAME.so or NAME.tar): list inputs/outputs, set inputs, run,
/// read outputs.
class Package {
public:
  explicit Package(const std::string& path) { check(loom_package_load(path.c_str(), &m_handle)); }
  Package(Package&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  Package& operator=(Package&& other) noexcept {
    std::swap(m_handle, other.m_handle);
    return *this;
  }
  Package(const Package&) = delete;
  Package& operator=(const Package&) = delete;
  ~Package() { loom_package_free(m_handle); }

  /// metadata.json (JSON text).
  std::string metadata() const {
    const char* m = nullptr;
    check(loom_package_metadata(m_handle, &m));
    return m;
  }
  int numInputs() const {
    int n = 0;
    check(loom_package_num_inputs(m_handle, &n));
    return n;
  }
  int numOutputs() const {
    int n = 0;
    check(loom_package_num_outputs(m_handle, &n));
    return n;
  }
  std::string inputName(int i) const {
    const char* n = nullptr;
    check(loom_package_input_name(m_handle, i, &n));
    return n;
  }
  std::string outputName(int i) const {
    const char* n = nullptr;
    check(loom_package_output_name(m_handle, i, &n));
    return n;
  }
  int inputIndex(const std::string& name) const {
    int i = 0;
    check(loom_package_input_index(m_handle, name.c_str(), &i));
    return i;
  }
  int outputIndex(const std::string& name) const {
    int i = 0;
    check(loom_package_output_index(m_handle, name.c_str(), &i));
    return i;
  }
  std::vector<int64_t> inputShape(int i) const {
    const int64_t* s = nullptr;
    int n = 0;
    check(loom_package_input_shape(m_handle, i, &s, &n));
    return {s, s + n};
  }
  std::vector<int64_t> outputShape(int i) const {
    const int64_t* s = nullptr;
    int n = 0;
    check(loom_package_output_shape(m_handle, i, &s, &n));
    return {s, s + n};
  }
  LoomDataType inputDType(int i) const {
    LoomDataType d{};
    check(loom_package_input_dtype(m_handle, i, &d));
    return d;
  }
  LoomDataType outputDType(int i) const {
    LoomDataType d{};
    check(loom_package_output_dtype(m_handle, i, &d));
    return d;
  }
  size_t inputBytes(int i) const {
    size_t n = 0;
    check(loom_package_input_nbytes(m_handle, i, &n));
    return n;
  }
  size_t outputBytes(int i) const {
    size_t n = 0;
    check(loom_package_output_nbytes(m_handle, i, &n));
    return n;
  }
  /// Copies exactly inputBytes(i) bytes into input `i` / `name`.
  void setInput(int i, const void* data, size_t nbytes) { check(loom_package_set_input(m_handle, i, data, nbytes)); }
  void setInput(const std::string& name, const void* data, size_t nbytes) {
    check(loom_package_set_input_by_name(m_handle, name.c_str(), data, nbytes));
  }
  /// Copies `data` of shape `shape` into input `i` (a dynamic package's symbolic dims take any
  /// extent that fits; the bytes must be the shape's size).
  void setInput(int i, const void* data, size_t nbytes, const std::vector<int64_t>& shape) {
    check(loom_package_set_input_shaped(m_handle, i, data, nbytes, shape.data(), int(shape.size())));
  }
  /// The same from a vector (its element size and count must fit the input's dtype and shape).
  template <class T> void setInput(int i, const std::vector<T>& data, const std::vector<int64_t>& shape) {
    setInput(i, data.data(), data.size() * sizeof(T), shape);
  }
  /// True when the package has symbolic dims.
  bool isDynamic() const {
    int d = 0;
    check(loom_package_is_dynamic(m_handle, &d));
    return d != 0;
  }
  /// Dim `axis` of input `i` as text ("3", "W") and its bound (-1: none).
  std::pair<std::string, int64_t> inputDim(int i, int axis) const {
    const char* t = nullptr;
    int64_t b = -1;
    check(loom_package_input_dim(m_handle, i, axis, &t, &b));
    return {t, b};
  }
  /// Copies `t` (dtype and shape must match; a dynamic package: any shape that fits) into input `i`.
  void setInput(int i, const Tensor& t) { check(loom_package_set_input_tensor(m_handle, i, t.view())); }
  void run() { check(loom_package_run(m_handle)); }
  void getOutput(int i, void* buf, size_t nbytes) const { check(loom_package_get_output(m_handle, i, buf, nbytes)); }
  /// Output `i` as a vector of T (sizeof(T) times the count must be the output's size).
  template <class T> std::vector<T> output(int i) const {
    size_t n = outputBytes(i);
    if (n % sizeof(T)) throw Error("output " + std::to_string(i) + " is not a whole number of elements of this type");
    std::vector<T> v(n / sizeof(T));
    getOutput(i, v.data(), n);
    return v;
  }
  LoomPackageHandle handle() const { return m_handle; }

private:
  LoomPackageHandle m_handle = nullptr;
};

inline int numThreads() { return loom_runtime_num_threads(); }

}  // namespace loom::rt
