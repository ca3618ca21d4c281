// Packed calls from C++: argument packing, tensor views, return values, errors to exceptions.
#include "runtime/PackedFunc.h"

#include <cstddef>

#include "runtime/LastError.h"
#include "runtime/RuntimeFailure.h"

namespace loom::runtime {

// Generated code reads these fields at fixed offsets (documented in c_runtime_api.h).
static_assert(sizeof(LoomValue) == 8);
static_assert(offsetof(LoomTensor, data) == 0 && offsetof(LoomTensor, device) == 8 &&
              offsetof(LoomTensor, ndim) == 16 && offsetof(LoomTensor, dtype) == 20 &&
              offsetof(LoomTensor, shape) == 24 && offsetof(LoomTensor, strides) == 32 &&
              offsetof(LoomTensor, byte_offset) == 40 && sizeof(LoomTensor) == 48);
static_assert(int(DeviceType::CPU) == kLoomCPU && int(DeviceType::CUDA) == kLoomCUDA &&
              int(DeviceType::OpenCL) == kLoomOpenCL);
static_assert(int(DType::Int) == kLoomDTypeInt && int(DType::Float) == kLoomDTypeFloat &&
              int(DType::Bool) == kLoomDTypeBool && int(DType::Handle) == kLoomDTypeHandle);

LoomTensor tensorView(const NDArray& a) {
  if (!a.defined()) throw RuntimeFailure("tensorView: undefined array");
  LoomTensor t{};
  t.data = a.data();
  t.device = {int32_t(a.device().type), a.device().id};
  t.ndim = int32_t(a.shape().size());
  t.dtype = {a.dtype().code, a.dtype().bits, a.dtype().lanes};
  t.shape = const_cast<int64_t*>(a.shape().data());
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

PackedArg::PackedArg(const char* s) : PackedArg(std::string(s ? s : "")) {
  if (!s) {
    m_str.reset();
    m_code = kLoomArgNull;
    m_value.v_handle = nullptr;
  }
}

PackedArg::PackedArg(std::string s)
    : m_code(kLoomArgStr), m_str(std::make_shared<std::string>(std::move(s))) {
  m_value.v_str = m_str->c_str();
}

PackedArg::PackedArg(NDArray a) : m_code(kLoomArgTensor), m_array(std::move(a)) {
  if (!m_array.defined()) throw RuntimeFailure("packed call: undefined NDArray argument");
}

PackedArg PackedArg::uint(uint64_t v) {
  PackedArg a{int64_t(v)};
  a.m_code = kLoomArgUInt;
  return a;
}

namespace {
const char* typeName(int code) {
  switch (code) {
  case kLoomArgInt: return "int";
  case kLoomArgUInt: return "uint";
  case kLoomArgFloat: return "float";
  case kLoomArgHandle: return "handle";
  case kLoomArgNull: return "null";
  case kLoomArgTensor: return "tensor";
  case kLoomArgStr: return "str";
  }
  return "unknown";
}

[[noreturn]] void wrongType(const char* wanted, int code) {
  throw RuntimeFailure(std::string("packed return value: expected ") + wanted + ", got " +
                       typeName(code) + " (type code " + std::to_string(code) + ")");
}
}  // namespace

int64_t PackedRet::asInt() const {
  if (m_code != kLoomArgInt && m_code != kLoomArgUInt) wrongType("int", m_code);
  return m_value.v_int64;
}

uint64_t PackedRet::asUInt() const {
  if (m_code == kLoomArgUInt || (m_code == kLoomArgInt && m_value.v_int64 >= 0))
    return uint64_t(m_value.v_int64);
  wrongType("uint", m_code);
}

double PackedRet::asFloat() const {
  if (m_code == kLoomArgFloat) return m_value.v_float64;
  if (m_code == kLoomArgInt) return double(m_value.v_int64);
  if (m_code == kLoomArgUInt) return double(uint64_t(m_value.v_int64));
  wrongType("float", m_code);
}

void* PackedRet::asHandle() const {
  if (m_code != kLoomArgHandle && m_code != kLoomArgTensor && m_code != kLoomArgNull)
    wrongType("handle", m_code);
  return m_code == kLoomArgNull ? nullptr : m_value.v_handle;
}

LoomTensor* PackedRet::asTensor() const {
  if (m_code != kLoomArgTensor) wrongType("tensor", m_code);
  return static_cast<LoomTensor*>(m_value.v_handle);
}

const std::string& PackedRet::asStr() const {
  if (m_code != kLoomArgStr) wrongType("str", m_code);
  return m_str;
}

PackedFunc::PackedFunc(LoomBackendPackedCFunc f, void* resource, std::string name,
                       std::shared_ptr<const void> owner)
    : m_func(f), m_resource(resource), m_name(std::move(name)), m_owner(std::move(owner)) {}

PackedRet PackedFunc::call(std::span<const PackedArg> args) const {
  if (!m_func) throw RuntimeFailure("packed call of an undefined function");
  size_t n = args.size();
  std::vector<LoomValue> values(n);
  std::vector<int> codes(n);
  std::vector<LoomTensor> views;
  views.reserve(n);  // no reallocation: values point into it
  for (size_t i = 0; i < n; ++i) {
    const PackedArg& a = args[i];
    codes[i] = a.m_code;
    values[i] = a.m_value;
    if (a.m_code == kLoomArgTensor && a.m_array.defined()) {
      views.push_back(tensorView(a.m_array));
      values[i].v_handle = &views.back();
    }
  }
  PackedRet ret;
  ret.m_code = kLoomArgNull;
  ret.m_value.v_handle = nullptr;
  clearLastError();
  int rc = m_func(values.data(), codes.data(), int(n), &ret.m_value, &ret.m_code, m_resource);
  if (rc != 0) {
    std::string message = lastError().empty()
                              ? "returned " + std::to_string(rc) + " without a message"
                              : lastError();
    throw RuntimeFailure(m_name + ": " + message);
  }
  if (ret.m_code == kLoomArgStr) {
    ret.m_str = ret.m_value.v_str ? ret.m_value.v_str : "";
    ret.m_value.v_str = nullptr;  // the callee's pointer is not ours to keep
  } else if (ret.m_code != kLoomArgInt && ret.m_code != kLoomArgUInt &&
             ret.m_code != kLoomArgFloat && ret.m_code != kLoomArgHandle &&
             ret.m_code != kLoomArgNull && ret.m_code != kLoomArgTensor) {
    throw RuntimeFailure(m_name + ": returned unknown type code " + std::to_string(ret.m_code));
  }
  return ret;
}

}  // namespace loom::runtime
