// NDArray: an n-dimensional tensor in aligned host (or device) memory, shared by handle.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::runtime {

/// Element type, laid out like DLPack's DLDataType. Codes match loom::DataType::Code:
/// 0 int, 1 uint, 2 float, 3 bfloat, 4 handle, 5 bool.
struct DType {
  enum Code : uint8_t { Int = 0, UInt = 1, Float = 2, BFloat = 3, Handle = 4, Bool = 5 };
  uint8_t code = Float;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  static constexpr DType f32() { return {Float, 32, 1}; }
  /// Bytes of one element (bool takes one byte).
  size_t bytes() const { return (size_t(bits < 8 ? 8 : bits) * lanes + 7) / 8; }
  bool operator==(const DType&) const = default;
  /// "float32", "int64", "bool", ... (same spelling as loom::DataType).
  std::string str() const;
  static bool parse(const std::string& text, DType* out);
};

enum class DeviceType : int32_t { CPU = 1, CUDA = 2, OpenCL = 4 };
struct Device {
  DeviceType type = DeviceType::CPU;
  int32_t id = 0;
  bool operator==(const Device&) const = default;
};

class DeviceAPI;

/// A dense row-major tensor. Copies of an NDArray share its storage; `copy()` makes a new one.
/// Storage comes from the device's DeviceAPI and is kAlignment-byte aligned. Failures throw
/// RuntimeFailure (a std::runtime_error).
class NDArray {
public:
  static constexpr size_t kAlignment = 64;

  NDArray() = default;
  /// Uninitialized storage for `shape` of `dtype` on `dev` (zero-filled on the host).
  static NDArray empty(std::vector<int64_t> shape, DType dtype, Device dev = {});

  bool defined() const { return m_data != nullptr; }
  void* data() const { return m_data ? m_data->ptr : nullptr; }
  template <class T> T* as() const { return static_cast<T*>(data()); }
  const std::vector<int64_t>& shape() const { return m_data->shape; }
  DType dtype() const { return m_data->dtype; }
  Device device() const { return m_data->device; }
  int64_t numel() const;
  size_t byteSize() const { return size_t(numel()) * dtype().bytes(); }

  /// A deep copy (same device).
  NDArray copy() const;
  /// Copies the bytes of `src` into this array; shapes and dtypes must agree (devices may differ
  /// when one of them is the CPU).
  void copyFrom(const NDArray& src);
  /// Copies `nbytes` (must equal byteSize()) from host memory into / out of this array.
  void copyFromBytes(const void* src, size_t nbytes);
  void copyToBytes(void* dst, size_t nbytes) const;
  /// "float32[2, 3] on cpu(0)".
  std::string describe() const;

private:
  struct Storage {
    void* ptr = nullptr;
    std::vector<int64_t> shape;
    DType dtype;
    Device device;
    DeviceAPI* api = nullptr;
    ~Storage();
  };
  std::shared_ptr<Storage> m_data;
};

}  // namespace loom::runtime
