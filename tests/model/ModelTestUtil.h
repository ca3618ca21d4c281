// Helpers of the model tests: small graphs, random inputs, comparison, running `loom`.
#pragma once
#include <QString>
#include <QStringList>
#include <cmath>
#include <random>

#include "core/graph/Expr.h"
#include "runtime/NDArray.h"
#include "tests/common/ProcessRun.h"

namespace loom::test {

inline runtime::NDArray randomArray(const std::vector<int64_t>& shape, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType::f32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = u(rng);
  return a;
}

/// Max abs difference of two float32 arrays (infinity when shapes differ).
inline double maxDiff(const runtime::NDArray& a, const runtime::NDArray& b) {
  if (a.shape() != b.shape() || !(a.dtype() == b.dtype())) return INFINITY;
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.as<float>()[i], y = b.as<float>()[i];
    if (std::isnan(x) != std::isnan(y)) return INFINITY;
    d = std::max(d, std::fabs(x - y));
  }
  return d;
}

/// max |a - b| / max |b|: the error relative to the reference's scale.
inline double relError(const runtime::NDArray& a, const runtime::NDArray& b) {
  double ref = 0;
  for (int64_t i = 0; i < b.numel(); ++i) ref = std::max(ref, double(std::fabs(b.as<float>()[i])));
  return maxDiff(a, b) / std::max(ref, 1e-30);
}

using LoomResult = ProcessResult;

inline LoomResult runLoom(const QStringList& args) { return runLoomBinary(args, 300000); }

}  // namespace loom::test
