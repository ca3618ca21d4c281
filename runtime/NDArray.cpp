// NDArray storage: allocation and copies through the device's DeviceAPI.
#include "runtime/NDArray.h"

#include <cstring>

#include "runtime/DeviceAPI.h"
#include "runtime/RuntimeFailure.h"

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

NDArray::Storage::~Storage() {
  if (ptr && api) api->freeData(device, ptr);
}

int64_t NDArray::numel() const {
  int64_t n = 1;
  for (auto d : m_data->shape) n *= d;
  return n;
}

NDArray NDArray::empty(std::vector<int64_t> shape, DType dtype, Device dev) {
  DeviceAPI* api = DeviceAPI::get(dev.type);
  int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) throw RuntimeFailure("NDArray::empty: negative dimension " + std::to_string(d));
    if (d != 0 && n > INT64_MAX / d)
      throw RuntimeFailure("NDArray::empty: element count overflows");
    n *= d;
  }
  if (dtype.lanes == 0 || dtype.bits == 0)
    throw RuntimeFailure("NDArray::empty: invalid dtype " + dtype.str());
  NDArray a;
  a.m_data = std::make_shared<Storage>();
  a.m_data->shape = std::move(shape);
  a.m_data->dtype = dtype;
  a.m_data->device = dev;
  size_t bytes = a.byteSize();
  a.m_data->ptr = api->allocData(dev, bytes, kAlignment, dtype);
  a.m_data->api = api;
  if (dev.type == DeviceType::CPU) std::memset(a.m_data->ptr, 0, bytes);
  return a;
}

NDArray NDArray::copy() const {
  NDArray c = empty(shape(), dtype(), device());
  c.copyFrom(*this);
  return c;
}

void NDArray::copyFrom(const NDArray& src) {
  if (!defined() || !src.defined()) throw RuntimeFailure("NDArray::copyFrom: undefined array");
  if (src.shape() != shape() || !(src.dtype() == dtype()))
    throw RuntimeFailure("NDArray::copyFrom: cannot copy " + src.describe() + " into " +
                         describe());
  // The copy runs on whichever side is not the host.
  Device side = device().type != DeviceType::CPU ? device() : src.device();
  DeviceAPI::get(side.type)->copyData(src.data(), 0, data(), 0, byteSize(), src.device(), device());
}

void NDArray::copyFromBytes(const void* src, size_t nbytes) {
  if (!defined()) throw RuntimeFailure("NDArray::copyFromBytes: undefined array");
  if (nbytes != byteSize())
    throw RuntimeFailure("NDArray::copyFromBytes: " + std::to_string(nbytes) +
                         " bytes given for " + describe() + " of " +
                         std::to_string(byteSize()) + " bytes");
  DeviceAPI::get(device().type)->copyData(src, 0, data(), 0, nbytes, Device{}, device());
}

void NDArray::copyToBytes(void* dst, size_t nbytes) const {
  if (!defined()) throw RuntimeFailure("NDArray::copyToBytes: undefined array");
  if (nbytes != byteSize())
    throw RuntimeFailure("NDArray::copyToBytes: " + std::to_string(nbytes) +
                         " bytes asked of " + describe() + " of " +
                         std::to_string(byteSize()) + " bytes");
  DeviceAPI::get(device().type)->copyData(data(), 0, dst, 0, nbytes, device(), Device{});
}

std::string NDArray::describe() const {
  if (!defined()) return "undefined array";
  std::string s = dtype().str() + "[";
  for (size_t i = 0; i < shape().size(); ++i) s += (i ? ", " : "") + std::to_string(shape()[i]);
  return s + "] on " + deviceTypeName(device().type) + "(" + std::to_string(device().id) + ")";
}

}  // namespace loom::runtime
