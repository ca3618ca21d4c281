// Helpers for graph tests: random tensors and constants, and comparing evaluations.
#pragma once
#include <cmath>
#include <random>

#include "core/graph/Evaluator.h"
#include "core/graph/Expr.h"

namespace loom::graph::testutil {

inline runtime::NDArray randomArray(std::vector<int64_t> shape, uint32_t seed, float lo = -1.f,
                                    float hi = 1.f) {
  runtime::NDArray a = runtime::NDArray::empty(std::move(shape), runtime::DType::f32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i)
    a.as<float>()[i] = d(rng);
  return a;
}

inline Constant randomConst(std::vector<int64_t> shape, uint32_t seed, float lo = -1.f,
                            float hi = 1.f) {
  return makeConstant(randomArray(std::move(shape), seed, lo, hi));
}

inline TensorType f32(std::vector<int64_t> shape) {
  return tensorType(shape, DataType::Float(32));
}

/// Largest absolute difference between the outputs of `a` and `b` on the same random inputs.
inline double maxDiff(const Function& a, const Function& b, uint32_t seed = 7) {
  std::vector<runtime::NDArray> args;
  for (size_t i = 0; i < a->params.size(); ++i) {
    auto* t = a->params[i]->annotation.as<TensorTypeNode>();
    args.push_back(randomArray(t->staticShape(), seed + uint32_t(i)));
  }
  std::vector<runtime::NDArray> x = evaluate(a, args), y = evaluate(b, args);
  if (x.size() != y.size()) return INFINITY;
  double m = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    if (x[k].shape() != y[k].shape()) return INFINITY;
    for (int64_t i = 0; i < x[k].numel(); ++i)
      m = std::max(m, double(std::fabs(x[k].as<float>()[i] - y[k].as<float>()[i])));
  }
  return m;
}

} // namespace loom::graph::testutil
