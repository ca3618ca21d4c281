// The built-in intrinsics and the registry that holds them.
#include "core/tir/Intrinsics.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <map>
#include <mutex>

namespace loom::tir {

namespace {
using Args = std::vector<double>;

std::map<std::string, Intrinsic>& table() {
  static std::map<std::string, Intrinsic> t = [] {
    std::map<std::string, Intrinsic> m;
    auto unary = [&](const char* name, double (*f)(double)) {
      m[name] = Intrinsic{name, 1, true, [f](const Args& a) { return f(a[0]); }};
    };
    unary("exp", [](double x) { return std::exp(x); });
    unary("exp2", [](double x) { return std::exp2(x); });
    unary("log", [](double x) { return std::log(x); });
    unary("log2", [](double x) { return std::log2(x); });
    unary("log10", [](double x) { return std::log10(x); });
    unary("sqrt", [](double x) { return std::sqrt(x); });
    unary("rsqrt", [](double x) { return 1.0 / std::sqrt(x); });
    unary("tanh", [](double x) { return std::tanh(x); });
    unary("sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    unary("erf", [](double x) { return std::erf(x); });
    unary("fabs", [](double x) { return std::fabs(x); });
    unary("floor", [](double x) { return std::floor(x); });
    unary("ceil", [](double x) { return std::ceil(x); });
    unary("trunc", [](double x) { return std::trunc(x); });
    // TVM's round rounds half to even (nearbyint).
    unary("round", [](double x) { return std::nearbyint(x); });
    unary("sin", [](double x) { return std::sin(x); });
    // float_fence(x) is x, rounded to its type where it stands: codegen does not contract it
    // into a fused multiply-add with the expression that uses it (LLVM arithmetic.fence).
    unary("float_fence", [](double x) { return x; });
    unary("cos", [](double x) { return std::cos(x); });
    m["pow"] = Intrinsic{"pow", 2, true, [](const Args& a) { return std::pow(a[0], a[1]); }};
    m["fmod"] = Intrinsic{"fmod", 2, true, [](const Args& a) { return std::fmod(a[0], a[1]); }};
    // fma(a, b, c): a * b + c rounded once (float32 operands: exact in double before the final
    // rounding except in rare double-rounding cases).
    m["fma"] = Intrinsic{"fma", 3, true, [](const Args& a) { return std::fma(a[0], a[1], a[2]); }};
    // if_then_else evaluates only the taken branch; the interpreter handles it specially.
    m["if_then_else"] = Intrinsic{"if_then_else", 3, true,
                                  [](const Args& a) { return a[0] != 0 ? a[1] : a[2]; }};
    // dot4_u8s8(a, b): a and b are int32 words of 4 bytes (little-endian), a's unsigned and b's
    // signed; the int32 sum of the 4 byte products (x86 vpdpbusd without the accumulator).
    // dot4_u8s8_pairs16 is the same value where the caller guarantees that the pair sums
    // a0*b0 + a1*b1 and a2*b2 + a3*b3 fit int16, so AVX2's saturating vpmaddubsw computes it.
    auto dot4 = [](const Args& a) {
      auto word = [](double v) { return uint32_t(int64_t(v)); };
      uint32_t x = word(a[0]), w = word(a[1]);
      int64_t s = 0;
      for (int k = 0; k < 4; ++k)
        s += int64_t((x >> (8 * k)) & 0xff) * int64_t(int8_t(uint8_t((w >> (8 * k)) & 0xff)));
      return double(s);
    };
    m["dot4_u8s8"] = Intrinsic{"dot4_u8s8", 2, true, dot4};
    m["dot4_u8s8_pairs16"] = Intrinsic{"dot4_u8s8_pairs16", 2, true, dot4};
    return m;
  }();
  return t;
}

std::mutex& tableMutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void registerIntrinsic(Intrinsic info) {
  std::lock_guard<std::mutex> lock(tableMutex());
  std::string name = info.name;
  table()[name] = std::move(info);
}

const Intrinsic* findIntrinsic(const std::string& name) {
  std::lock_guard<std::mutex> lock(tableMutex());
  auto& t = table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : &it->second;
}

std::vector<std::string> intrinsicNames() {
  std::lock_guard<std::mutex> lock(tableMutex());
  std::vector<std::string> names;
  for (auto& [k, v] : table()) names.push_back(k);
  return names;
}

}  // namespace loom::tir
