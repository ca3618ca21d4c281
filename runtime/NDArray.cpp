// NDArray storage: aligned host allocation and copies.
#include "runtime/NDArray.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace loom::runtime {

std::string DType::str() const {
  std::string s;
  switch (code) {
  case Int: s = "int" + std::to_string(bits); break;
  case UInt: s = "uint" + std::to_string(bits); break;
  case Float: s = "float" + std::to_string(bits); break;
  case BFloat: s = "bfloat" + std::to_string(bits); break;
  case Bool: s = "bool"; break;
  case Handle: s = "handle"; break;
  default: s = "unknown"; break;
  }
  if (lanes > 1) s += "x" + std::to_string(lanes);
  return s;
}

bool DType::parse(const std::string& text, DType* out) {
  struct Named { const char* name; DType t; };
  static const Named table[] = {
      {"bool", {Bool, 1, 1}},      {"int8", {Int, 8, 1}},       {"int16", {Int, 16, 1}},
      {"int32", {Int, 32, 1}},     {"int64", {Int, 64, 1}},     {"uint8", {UInt, 8, 1}},
      {"uint16", {UInt, 16, 1}},   {"uint32", {UInt, 32, 1}},   {"uint64", {UInt, 64, 1}},
      {"float16", {Float, 16, 1}}, {"float32", {Float, 32, 1}}, {"float64", {Float, 64, 1}},
      {"bfloat16", {BFloat, 16, 1}}, {"handle", {Handle, 64, 1}},
  };
  for (auto& n : table)
    if (text == n.name) {
      *out = n.t;
      return true;
    }
  return false;
}

NDArray::Storage::~Storage() { std::free(ptr); }

int64_t NDArray::numel() const {
  int64_t n = 1;
  for (auto d : m_data->shape) n *= d;
  return n;
}

NDArray NDArray::empty(std::vector<int64_t> shape, DType dtype, Device dev) {
  if (dev.type != DeviceType::CPU)
    throw std::runtime_error("NDArray::empty: only CPU storage is available in this build");
  for (auto d : shape)
    if (d < 0) throw std::runtime_error("NDArray::empty: negative dimension");
  NDArray a;
  a.m_data = std::make_shared<Storage>();
  a.m_data->shape = std::move(shape);
  a.m_data->dtype = dtype;
  a.m_data->device = dev;
  size_t bytes = a.byteSize();
  size_t rounded = (bytes + 63) / 64 * 64;
  a.m_data->ptr = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!a.m_data->ptr) throw std::bad_alloc();
  std::memset(a.m_data->ptr, 0, rounded ? rounded : 64);
  return a;
}

NDArray NDArray::copy() const {
  NDArray c = empty(shape(), dtype(), device());
  std::memcpy(c.data(), data(), byteSize());
  return c;
}

void NDArray::copyFrom(const NDArray& src) {
  if (src.shape() != shape() || !(src.dtype() == dtype()))
    throw std::runtime_error("NDArray::copyFrom: shape or dtype mismatch");
  std::memcpy(data(), src.data(), byteSize());
}

}  // namespace loom::runtime
