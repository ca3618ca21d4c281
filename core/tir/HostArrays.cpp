// Host-side NDArray helpers: element access by dtype, random fill, comparison and printing.
#include "core/tir/HostArrays.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "core/support/Error.h"

namespace loom::tir {

namespace {

using runtime::DType;
using runtime::NDArray;

/// Rounds |v| to a binary format with `man` mantissa bits, minimum normal exponent `minExp` and
/// maximum exponent `maxExp`, to nearest even; overflow gives inf.
double roundToFormat(double v, int man, int minExp, int maxExp) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  double a = std::fabs(v);
  int e = std::max(std::ilogb(a), minExp);
  double ulp = std::ldexp(1.0, e - man);
  double r = std::nearbyint(a / ulp) * ulp;
  double maxFinite = (2.0 - std::ldexp(1.0, -man)) * std::ldexp(1.0, maxExp);
  if (r > maxFinite) r = std::numeric_limits<double>::infinity();
  return std::copysign(r, v);
}

uint16_t encode16(double v, int man, int minExp, int maxExp, uint16_t quietNaN) {
  if (std::isnan(v)) return quietNaN;
  double r = roundToFormat(v, man, minExp, maxExp);
  uint16_t sign = std::signbit(r) ? uint16_t(0x8000) : uint16_t(0);
  int expBits = 15 - man;
  uint16_t expMax = uint16_t((1 << expBits) - 1);
  double a = std::fabs(r);
  if (std::isinf(a)) return uint16_t(sign | (expMax << man));
  if (a == 0) return sign;
  int e = std::ilogb(a);
  if (e < minExp) {
    auto mant = uint16_t(std::ldexp(a, man - minExp));
    return uint16_t(sign | mant);
  }
  auto mant = uint16_t(std::ldexp(a, man - e) - std::ldexp(1.0, man));
  auto field = uint16_t(e + maxExp);
  return uint16_t(sign | (field << man) | mant);
}

double decode16(uint16_t bits, int man, int minExp, int maxExp) {
  int expBits = 15 - man;
  int expMax = (1 << expBits) - 1;
  bool neg = bits & 0x8000;
  int field = (bits >> man) & expMax;
  int mant = bits & ((1 << man) - 1);
  double r;
  if (field == 0) r = std::ldexp(double(mant), minExp - man);
  else if (field == expMax) r = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else r = std::ldexp(1.0 + std::ldexp(double(mant), -man), field - maxExp);
  return neg ? -r : r;
}

size_t scalarBytes(DType t) { return t.bits < 8 ? 1 : t.bits / 8; }

int64_t scalarCount(const NDArray& a) { return a.numel() * a.dtype().lanes; }

void checkHost(const NDArray& a, const char* what) {
  if (!a.defined()) LOOM_THROW(ValueError) << what << ": the array is undefined";
  if (a.device().type != runtime::DeviceType::CPU)
    LOOM_THROW(ValueError) << what << ": the array is not in host memory";
}

/// Converts a double to an integer of `bits` the way C truncation then wrapping does.
uint64_t toIntBits(double v, bool isUnsigned) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  if (t >= -9223372036854775808.0 && t < 9223372036854775808.0) return uint64_t(int64_t(t));
  if (isUnsigned && t >= 0 && t < 18446744073709551616.0) return uint64_t(t);
  return uint64_t(std::numeric_limits<int64_t>::min());
}

std::string shapeStr(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string indexStr(const NDArray& a, int64_t flat) {
  auto& shape = a.shape();
  int lanes = a.dtype().lanes;
  int64_t lane = flat % lanes;
  flat /= lanes;
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string r = shapeStr(idx);
  if (lanes > 1) r += " lane " + std::to_string(lane);
  return r;
}

std::string numStr(double v) {
  std::ostringstream os;
  os.precision(8);
  os << v;
  return os.str();
}

}  // namespace

uint16_t toHalfBits(double v) { return encode16(v, 10, -14, 15, 0x7E00); }
double fromHalfBits(uint16_t bits) { return decode16(bits, 10, -14, 15); }
uint16_t toBFloat16Bits(double v) { return encode16(v, 7, -126, 127, 0x7FC0); }
double fromBFloat16Bits(uint16_t bits) { return decode16(bits, 7, -126, 127); }

double getElement(const NDArray& a, int64_t i) {
  checkHost(a, "getElement");
  if (i < 0 || i >= scalarCount(a))
    LOOM_THROW(ValueError) << "getElement: index " << i << " outside the " << scalarCount(a) << " elements of "
                           << a.dtype().str() << shapeStr(a.shape());
  DType t = a.dtype();
  const uint8_t* p = static_cast<const uint8_t*>(a.data()) + size_t(i) * scalarBytes(t);
  switch (t.code) {
  case DType::Bool: return *p != 0 ? 1.0 : 0.0;
  case DType::Int:
    switch (t.bits) {
    case 8: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case 16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case 32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case 64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
    }
    break;
  case DType::UInt:
    switch (t.bits) {
    case 8: return *p;
    case 16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case 64: { uint64_t v; std::memcpy(&v, p, 8); return double(v); }
    }
    break;
  case DType::Float:
    switch (t.bits) {
    case 16: { uint16_t v; std::memcpy(&v, p, 2); return fromHalfBits(v); }
    case 32: { float v; std::memcpy(&v, p, 4); return v; }
    case 64: { double v; std::memcpy(&v, p, 8); return v; }
    }
    break;
  case DType::BFloat:
    if (t.bits == 16) {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return fromBFloat16Bits(v);
    }
    break;
  default: break;
  }
  LOOM_THROW(ValueError) << "getElement: unsupported element type " << t.str();
}

void setElement(NDArray& a, int64_t i, double v) {
  checkHost(a, "setElement");
  if (i < 0 || i >= scalarCount(a))
    LOOM_THROW(ValueError) << "setElement: index " << i << " outside the " << scalarCount(a) << " elements of "
                           << a.dtype().str() << shapeStr(a.shape());
  DType t = a.dtype();
  uint8_t* p = static_cast<uint8_t*>(a.data()) + size_t(i) * scalarBytes(t);
  switch (t.code) {
  case DType::Bool: *p = v != 0 ? 1 : 0; return;
  case DType::Int:
  case DType::UInt:
    if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) {
      uint64_t bits = toIntBits(v, t.code == DType::UInt);
      std::memcpy(p, &bits, t.bits / 8);  // little-endian: the low bytes
      return;
    }
    break;
  case DType::Float:
    if (t.bits == 16) {
      uint16_t h = toHalfBits(v);
      std::memcpy(p, &h, 2);
      return;
    }
    if (t.bits == 32) {
      float f = float(v);
      std::memcpy(p, &f, 4);
      return;
    }
    if (t.bits == 64) {
      std::memcpy(p, &v, 8);
      return;
    }
    break;
  case DType::BFloat:
    if (t.bits == 16) {
      uint16_t h = toBFloat16Bits(v);
      std::memcpy(p, &h, 2);
      return;
    }
    break;
  default: break;
  }
  LOOM_THROW(ValueError) << "setElement: unsupported element type " << t.str();
}

void fillRandom(NDArray& a, uint64_t seed) {
  checkHost(a, "fillRandom");
  DType t = a.dtype();
  if (t.code == DType::Handle) LOOM_THROW(ValueError) << "fillRandom: cannot fill a handle array";
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull);
  int64_t n = scalarCount(a);
  for (int64_t i = 0; i < n; ++i) {
    double v;
    switch (t.code) {
    case DType::Bool: v = double(rng() & 1); break;
    case DType::Int: v = double(int64_t(rng() % 9) - 4); break;
    case DType::UInt: v = double(rng() % 9); break;
    default: v = std::ldexp(double(rng() >> 11), -52) - 1.0; break;  // [-1, 1)
    }
    setElement(a, i, v);
  }
}

double maxRelError(const NDArray& got, const NDArray& want) {
  checkHost(got, "maxRelError");
  checkHost(want, "maxRelError");
  if (got.shape() != want.shape() || !(got.dtype() == want.dtype()))
    LOOM_THROW(ValueError) << "maxRelError: comparing " << got.dtype().str() << shapeStr(got.shape()) << " with "
                           << want.dtype().str() << shapeStr(want.shape());
  int64_t n = scalarCount(want);
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    double w = getElement(want, i);
    if (std::isfinite(w)) scale = std::max(scale, std::fabs(w));
  }
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double g = getElement(got, i), w = getElement(want, i);
    if (std::isnan(g) || std::isnan(w)) return std::numeric_limits<double>::infinity();
    if (g == w) continue;
    if (std::isinf(g) || std::isinf(w)) return std::numeric_limits<double>::infinity();
    double denom = std::max({std::fabs(w), 1e-3 * scale, 1e-6});
    worst = std::max(worst, std::fabs(g - w) / denom);
  }
  return worst;
}

namespace {
bool closeAt(double g, double w, double rtol, double atol, bool equalNan) {
  if (std::isnan(g) || std::isnan(w)) return equalNan && std::isnan(g) && std::isnan(w);
  if (g == w) return true;
  if (std::isinf(g) || std::isinf(w)) return false;
  return std::fabs(g - w) <= atol + rtol * std::fabs(w);
}
}  // namespace

bool allClose(const NDArray& got, const NDArray& want, double rtol, double atol, bool equalNan) {
  checkHost(got, "allClose");
  checkHost(want, "allClose");
  if (got.shape() != want.shape() || !(got.dtype() == want.dtype())) return false;
  int64_t n = scalarCount(want);
  for (int64_t i = 0; i < n; ++i)
    if (!closeAt(getElement(got, i), getElement(want, i), rtol, atol, equalNan)) return false;
  return true;
}

std::string formatArray(const NDArray& a, int64_t maxElements) {
  if (!a.defined()) return "<undefined array>";
  std::ostringstream os;
  os << a.dtype().str() << shapeStr(a.shape()) << " ";
  if (a.device().type != runtime::DeviceType::CPU) return os.str() + "<device memory>";
  if (a.dtype().code == DType::Handle) return os.str() + "<handles>";
  auto& shape = a.shape();
  int lanes = a.dtype().lanes;
  int64_t printed = 0;
  bool stopped = false;
  // Recursive nesting over dimensions; vector elements print as (l0, l1, ...).
  std::function<void(size_t, int64_t)> rec = [&](size_t dim, int64_t base) {
    if (dim == shape.size()) {
      if (printed >= maxElements) {
        if (!stopped) os << "...";
        stopped = true;
        return;
      }
      ++printed;
      if (lanes > 1) os << "(";
      for (int l = 0; l < lanes; ++l) os << (l ? ", " : "") << numStr(getElement(a, base * lanes + l));
      if (lanes > 1) os << ")";
      return;
    }
    os << "[";
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (stopped) break;
      if (i) os << ", ";
      rec(dim + 1, base * shape[dim] + i);
    }
    os << "]";
  };
  rec(0, 0);
  return os.str();
}

std::string mismatchReport(const NDArray& got, const NDArray& want, double rtol, double atol, bool equalNan) {
  if (!got.defined() || !want.defined()) return "an array is undefined";
  if (got.shape() != want.shape() || !(got.dtype() == want.dtype()))
    return "got " + got.dtype().str() + shapeStr(got.shape()) + ", want " + want.dtype().str() +
           shapeStr(want.shape());
  if (allClose(got, want, rtol, atol, equalNan)) return {};
  int64_t n = scalarCount(want), bad = 0, first = -1;
  for (int64_t i = 0; i < n; ++i)
    if (!closeAt(getElement(got, i), getElement(want, i), rtol, atol, equalNan)) {
      if (first < 0) first = i;
      ++bad;
    }
  std::ostringstream os;
  os << bad << " of " << n << " elements differ (rtol " << rtol << ", atol " << atol << "); first at "
     << indexStr(want, first) << ": got " << numStr(getElement(got, first)) << ", want "
     << numStr(getElement(want, first)) << "; max relative error " << maxRelError(got, want);
  if (n <= 32) os << "\n  got:  " << formatArray(got) << "\n  want: " << formatArray(want);
  return os.str();
}

}  // namespace loom::tir
