// The built-in intrinsics and the registry that holds them.
#include "core/tir/Intrinsics.h"

#include <algorithm>
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
    unary("cos", [](double x) { return std::cos(x); });
    m["pow"] = Intrinsic{"pow", 2, true, [](const Args& a) { return std::pow(a[0], a[1]); }};
    m["fmod"] = Intrinsic{"fmod", 2, true, [](const Args& a) { return std::fmod(a[0], a[1]); }};
    // if_then_else evaluates only the taken branch; the interpreter handles it specially.
    m["if_then_else"] = Intrinsic{"if_then_else", 3, true,
                                  [](const Args& a) { return a[0] != 0 ? a[1] : a[2]; }};
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
