// Shared helpers of the op family files: host tensor conversion, broadcasting, registration.
#include "core/graph/OpsInternal.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/support/Numeric.h"

namespace loom::graph {

std::vector<int64_t> HostTensor::strides() const {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

namespace {
template <class T> void readAll(const void* p, std::vector<double>& v) {
  const T* t = static_cast<const T*>(p);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = double(t[i]);
}
/// double -> T. For an integer T the value goes through saturatingInt64 (fuzz_torch: the int
/// 2^63 - 1 through makeScalar, whose double is 2^63), but for uint64_t's upper half.
template <class T> T fromDouble(double x) {
  if constexpr (std::is_integral_v<T>) {
    if (std::is_same_v<T, uint64_t> && x >= 0x1p63 && x < 0x1p64) return T(uint64_t(x));
    return T(saturatingInt64(x));
  } else {
    return T(x);
  }
}
template <class T> void writeAll(void* p, const std::vector<double>& v) {
  T* t = static_cast<T*>(p);
  for (size_t i = 0; i < v.size(); ++i)
    t[i] = fromDouble<T>(v[i]);
}
double halfToDouble(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(double(man), -24);
  else if (exp == 31)
    v = man ? std::nan("") : INFINITY;
  else
    v = std::ldexp(double(man | 0x400), exp - 25);
  return sign ? -v : v;
}

uint16_t doubleToHalf(double d) {
  // Via the float bits, rounding to nearest even.
  float f = float(d);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 31) return uint16_t(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return uint16_t(sign);
    man |= 0x800000;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exp) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return uint16_t(half);
}

double bfloatToDouble(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t doubleToBfloat(double d) {
  float f = float(d);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40); // NaN stays NaN
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

} // namespace

HostTensor fromNDArray(const runtime::NDArray& a) {
  HostTensor h(a.shape(), toDataType(a.dtype()));
  const void* p = a.data();
  DataType t = h.dtype;
  if (t == DataType::Float(32))
    readAll<float>(p, h.v);
  else if (t == DataType::Float(64))
    readAll<double>(p, h.v);
  else if (t == DataType::Int(64))
    readAll<int64_t>(p, h.v);
  else if (t == DataType::Int(32))
    readAll<int32_t>(p, h.v);
  else if (t == DataType::Int(16))
    readAll<int16_t>(p, h.v);
  else if (t == DataType::Int(8))
    readAll<int8_t>(p, h.v);
  else if (t == DataType::UInt(8) || t.isBool())
    readAll<uint8_t>(p, h.v);
  else if (t == DataType::UInt(16))
    readAll<uint16_t>(p, h.v);
  else if (t == DataType::UInt(32))
    readAll<uint32_t>(p, h.v);
  else if (t == DataType::UInt(64))
    readAll<uint64_t>(p, h.v);
  else if (t == DataType::Float(16) || t.isBFloat16()) {
    const uint16_t* b = static_cast<const uint16_t*>(p);
    for (size_t i = 0; i < h.v.size(); ++i)
      h.v[i] = t.isBFloat16() ? bfloatToDouble(b[i]) : halfToDouble(b[i]);
  } else
    LOOM_THROW(UnsupportedError) << "host kernels do not handle " << t.str() << " tensors";
  return h;
}

runtime::NDArray toNDArray(const HostTensor& h) {
  // A kernel's values and its shape must agree: more values than the shape holds were written
  // past the array (a reshape to a shape of another size, type-checked only symbolically).
  LOOM_ICHECK(HostTensor::count(h.shape) == int64_t(h.v.size()))
      << "host tensor of shape " << shapeStr(Shape(h.shape.begin(), h.shape.end())) << " holds " << h.v.size() << " values";
  runtime::NDArray a = runtime::NDArray::empty(h.shape, toDType(h.dtype));
  void* p = a.data();
  DataType t = h.dtype;
  if (t == DataType::Float(32))
    writeAll<float>(p, h.v);
  else if (t == DataType::Float(64))
    writeAll<double>(p, h.v);
  else if (t == DataType::Int(64))
    writeAll<int64_t>(p, h.v);
  else if (t == DataType::Int(32))
    writeAll<int32_t>(p, h.v);
  else if (t == DataType::Int(16))
    writeAll<int16_t>(p, h.v);
  else if (t == DataType::Int(8))
    writeAll<int8_t>(p, h.v);
  else if (t == DataType::UInt(8))
    writeAll<uint8_t>(p, h.v);
  else if (t == DataType::UInt(16))
    writeAll<uint16_t>(p, h.v);
  else if (t == DataType::UInt(32))
    writeAll<uint32_t>(p, h.v);
  else if (t == DataType::UInt(64))
    writeAll<uint64_t>(p, h.v);
  else if (t.isBool()) {
    uint8_t* b = static_cast<uint8_t*>(p);
    for (size_t i = 0; i < h.v.size(); ++i)
      b[i] = h.v[i] != 0;
  } else if (t == DataType::Float(16) || t.isBFloat16()) {
    uint16_t* b = static_cast<uint16_t*>(p);
    for (size_t i = 0; i < h.v.size(); ++i)
      b[i] = t.isBFloat16() ? doubleToBfloat(h.v[i]) : doubleToHalf(h.v[i]);
  } else
    LOOM_THROW(UnsupportedError) << "host kernels do not handle " << t.str() << " tensors";
  return a;
}

const TensorTypeNode& argTensor(const CallNode& call, const std::vector<Type>& args, size_t i) {
  LOOM_ICHECK(i < args.size()) << "argument index";
  const TensorTypeNode* t = args[i].as<TensorTypeNode>();
  if (!t) LOOM_TYPE_FAIL(call) << "argument " << i << " must be a tensor, got " << typeStr(args[i]);
  return *t;
}

int64_t normAxis(const CallNode& call, int64_t axis, int64_t ndim) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    LOOM_TYPE_FAIL(call) << "axis " << axis << " is out of range for rank " << ndim;
  return a;
}

Shape broadcastShapes(const CallNode& call, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const Dim* da = i < n - a.size() ? nullptr : &a[i - (n - a.size())];
    const Dim* db = i < n - b.size() ? nullptr : &b[i - (n - b.size())];
    if (!da)
      out[i] = *db;
    else if (!db)
      out[i] = *da;
    else if (*da == *db)
      out[i] = *da;
    else if (da->isStatic() && da->value == 1)
      out[i] = *db;
    else if (db->isStatic() && db->value == 1)
      out[i] = *da;
    else if (da->isStatic() && db->isStatic())
      LOOM_TYPE_FAIL(call) << "shapes " << shapeStr(a) << " and " << shapeStr(b)
                           << " do not broadcast (dimension " << i << ": " << da->value << " vs "
                           << db->value << ")";
    else
      out[i] = da->isStatic() ? *da : *db;
  }
  return out;
}

std::vector<int64_t> broadcastStatic(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t broadcastIndex(const std::vector<int64_t>& idx, const std::vector<int64_t>& inShape) {
  int64_t flat = 0;
  size_t off = idx.size() - inShape.size();
  for (size_t i = 0; i < inShape.size(); ++i)
    flat = flat * inShape[i] + (inShape[i] == 1 ? 0 : idx[i + off]);
  return flat;
}

void unravel(int64_t flat, const std::vector<int64_t>& shape, std::vector<int64_t>& idx) {
  idx.resize(shape.size());
  for (int i = int(shape.size()) - 1; i >= 0; --i) {
    idx[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
}

HostKernel simpleKernel(SimpleKernel k) {
  return
      [k](const CallNode& call, const std::vector<runtime::NDArray>& inputs, const Type& outType) {
        std::vector<HostTensor> in;
        for (const auto& a : inputs)
          in.push_back(fromNDArray(a));
        const TensorTypeNode* out = outType.as<TensorTypeNode>();
        LOOM_ICHECK(out) << "simple kernel with tuple output";
        HostTensor r = k(call, in, *out);
        r.dtype = out->dtype;
        return std::vector<runtime::NDArray>{toNDArray(r)};
      };
}

void defineOp(const std::string& name, int numInputs, OpPattern pattern,
              std::vector<AttrSpec> attrs, TypeRelation rel, SimpleKernel kernel, std::string doc) {
  OpDef d;
  d.name = name;
  d.numInputs = numInputs;
  d.pattern = pattern;
  d.attrs = std::move(attrs);
  d.typeRel = std::move(rel);
  if (kernel) d.hostKernel = simpleKernel(std::move(kernel));
  d.doc = std::move(doc);
  registerOp(std::move(d));
}

AttrSpec attrInt(std::string n, std::optional<int64_t> d) {
  return {std::move(n), AttrKind::Int, d ? std::optional<AttrValue>(*d) : std::nullopt};
}
AttrSpec attrFloat(std::string n, std::optional<double> d) {
  return {std::move(n), AttrKind::Float, d ? std::optional<AttrValue>(*d) : std::nullopt};
}
AttrSpec attrString(std::string n, std::optional<std::string> d) {
  return {std::move(n), AttrKind::String, d ? std::optional<AttrValue>(*d) : std::nullopt};
}
AttrSpec attrInts(std::string n, std::optional<std::vector<int64_t>> d) {
  return {std::move(n), AttrKind::Ints, d ? std::optional<AttrValue>(*d) : std::nullopt};
}
AttrSpec attrDType(std::string n) {
  return {std::move(n), AttrKind::DType, std::nullopt};
}

} // namespace loom::graph
