// Shared model-command helpers: ONNX graph input/output names, allClose, fill modes.
#include "app/cli/ModelCommon.h"

#include <cmath>
#include <fstream>
#include <onnx/onnx_pb.h>
#include <random>
#include <set>

#include "core/tir/HostArrays.h"

namespace loom::cli {

namespace {
bool parseModel(const std::string& path, onnx::ModelProto* m) {
  std::ifstream in(path, std::ios::binary);
  return in && m->ParseFromIstream(&in);
}
template <class T> void setAll(runtime::NDArray& a, const std::function<double(int64_t)>& f) {
  for (int64_t i = 0; i < a.numel(); ++i) a.as<T>()[i] = T(f(i));
}
}  // namespace

std::vector<std::string> onnxOutputNames(const std::string& path) {
  onnx::ModelProto m;
  std::vector<std::string> out;
  if (!parseModel(path, &m)) return out;
  for (const auto& o : m.graph().output()) out.push_back(o.name());
  return out;
}

std::vector<std::string> onnxInputNames(const std::string& path) {
  onnx::ModelProto m;
  std::vector<std::string> out;
  if (!parseModel(path, &m)) return out;
  std::set<std::string> inits;
  for (const auto& i : m.graph().initializer()) inits.insert(i.name());
  for (const auto& i : m.graph().input())
    if (!inits.count(i.name())) out.push_back(i.name());
  return out;
}

double elementAt(const runtime::NDArray& a, int64_t i) {
  runtime::DType t = a.dtype();
  switch (t.code) {
  case runtime::DType::BFloat: return t.bits == 16 ? tir::fromBFloat16Bits(a.as<uint16_t>()[i]) : NAN;
  case runtime::DType::Float:
    if (t.bits == 16) return tir::fromHalfBits(a.as<uint16_t>()[i]);
    return t.bits == 64 ? a.as<double>()[i] : t.bits == 32 ? double(a.as<float>()[i]) : NAN;
  case runtime::DType::Bool: return a.as<uint8_t>()[i] ? 1 : 0;
  case runtime::DType::UInt:
    return t.bits == 8 ? a.as<uint8_t>()[i] : t.bits == 16 ? a.as<uint16_t>()[i] : t.bits == 32 ? a.as<uint32_t>()[i]
                                                                                                 : double(a.as<uint64_t>()[i]);
  case runtime::DType::Int:
    return t.bits == 8 ? a.as<int8_t>()[i] : t.bits == 16 ? a.as<int16_t>()[i] : t.bits == 32 ? a.as<int32_t>()[i]
                                                                                              : double(a.as<int64_t>()[i]);
  default: return NAN;
  }
}

bool allClose(const runtime::NDArray& got, const runtime::NDArray& want, double rtol, double atol, std::string* why) {
  if (got.shape() != want.shape() || !(got.dtype() == want.dtype())) {
    *why = "got " + got.describe() + ", want " + want.describe();
    return false;
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = elementAt(got, i), w = elementAt(want, i);
    if (std::isinf(w) && g == w) continue;
    if (std::isnan(w) && std::isnan(g)) continue;  // NaN where NaN is expected (numpy's equal_nan)
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      *why = "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(w);
      return false;
    }
  }
  return true;
}

runtime::NDArray filled(const std::vector<int64_t>& shape, runtime::DType t, const std::string& mode, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, t);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::function<double(int64_t)> f = [&](int64_t) -> double {
    if (mode == "zeros") return 0.0;
    if (mode == "ones") return 1.0;
    double x = u(rng);
    return t.code == runtime::DType::Float ? x : std::floor(x * 10);
  };
  switch (t.code) {
  case runtime::DType::Float:
    if (t.bits == 64) setAll<double>(a, f);
    else setAll<float>(a, f);
    break;
  case runtime::DType::Bool: setAll<uint8_t>(a, [&](int64_t i) { return f(i) >= 0.5 ? 1.0 : 0.0; }); break;
  case runtime::DType::UInt:
  case runtime::DType::Int:
    if (t.bits == 8) setAll<int8_t>(a, f);
    else if (t.bits == 16) setAll<int16_t>(a, f);
    else if (t.bits == 32) setAll<int32_t>(a, f);
    else setAll<int64_t>(a, f);
    break;
  default: break;
  }
  return a;
}

}  // namespace loom::cli
