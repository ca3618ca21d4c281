// PackedFunc: calls a function of the C packed-call ABI with NDArrays and scalars from C++.
#pragma once
#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "loom/c_runtime_api.h"
#include "runtime/NDArray.h"

namespace loom::runtime {

/// The LoomTensor view of `a` (data, device, dtype, shape; strides NULL, byte_offset 0). The view
/// borrows `a`'s shape: it is valid while `a` lives, and its shape must not be written.
LoomTensor tensorView(const NDArray& a);

/// One argument of a packed call; built implicitly from what it holds.
class PackedArg {
public:
  PackedArg(std::nullptr_t) : m_code(kLoomArgNull) { m_value.v_handle = nullptr; }
  template <std::integral T> PackedArg(T v) : m_code(kLoomArgInt) { m_value.v_int64 = int64_t(v); }
  template <std::floating_point T> PackedArg(T v) : m_code(kLoomArgFloat) {
    m_value.v_float64 = double(v);
  }
  PackedArg(void* handle) : m_code(kLoomArgHandle) { m_value.v_handle = handle; }
  PackedArg(LoomTensor* tensor) : m_code(kLoomArgTensor) { m_value.v_handle = tensor; }
  PackedArg(const char* s);
  PackedArg(std::string s);
  PackedArg(NDArray a);
  /// An unsigned 64-bit integer (type code kLoomArgUInt).
  static PackedArg uint(uint64_t v);

  int typeCode() const { return m_code; }

private:
  friend class PackedFunc;
  LoomValue m_value{};
  int m_code;
  std::shared_ptr<std::string> m_str;  // owns a string argument
  NDArray m_array;                     // keeps an array argument alive
};

/// The value a packed call returned; strings are copied, tensors and handles are borrowed.
class PackedRet {
public:
  int typeCode() const { return m_code; }
  bool isNull() const { return m_code == kLoomArgNull; }
  /// Each accessor throws RuntimeFailure when the value has another type code.
  int64_t asInt() const;     // Int or UInt
  uint64_t asUInt() const;   // UInt or a non-negative Int
  double asFloat() const;    // Float, or Int/UInt converted
  void* asHandle() const;    // Handle, Tensor or Null
  LoomTensor* asTensor() const;
  const std::string& asStr() const;

private:
  friend class PackedFunc;
  LoomValue m_value{};
  int m_code = kLoomArgNull;
  std::string m_str;
};

/// A callable packed function: the C function, its resource handle, and what keeps its code
/// loaded (the Module it came from). Copies share that.
class PackedFunc {
public:
  PackedFunc() = default;
  PackedFunc(LoomBackendPackedCFunc f, void* resource, std::string name,
             std::shared_ptr<const void> owner = nullptr);

  bool defined() const { return m_func != nullptr; }
  const std::string& name() const { return m_name; }
  LoomBackendPackedCFunc cfunc() const { return m_func; }
  void* resource() const { return m_resource; }

  /// Calls the function; a non-zero return becomes RuntimeFailure "<name>: <last error>".
  PackedRet call(std::span<const PackedArg> args) const;
  template <class... A> PackedRet operator()(A&&... args) const {
    const PackedArg packed[] = {PackedArg(std::forward<A>(args))..., PackedArg(nullptr)};
    return call(std::span<const PackedArg>(packed, sizeof...(A)));
  }

private:
  LoomBackendPackedCFunc m_func = nullptr;
  void* m_resource = nullptr;
  std::string m_name;
  std::shared_ptr<const void> m_owner;
};

}  // namespace loom::runtime
