// Helpers shared by the qnn passes.
#include "core/graph/qnn/QnnUtil.h"

#include <cmath>

#include "core/graph/OpsInternal.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph::qnn {

const TensorTypeNode& tensorTypeOf(const Expr& e) {
  Type t = inferType(e);
  auto* tt = t.as<TensorTypeNode>();
  LOOM_ICHECK(tt) << "qnn: expected a tensor operand";
  return *tt;
}

std::vector<double> constantValues(const Expr& e) {
  auto* c = e.as<ConstantNode>();
  if (!c) return {};
  return fromNDArray(c->data).v;
}

bool isConstantZero(const Expr& e) {
  if (!e.as<ConstantNode>()) return false;
  for (double v : constantValues(e))
    if (v != 0) return false;
  return true;
}

Expr alongAxis(const Expr& v, int64_t axis, int64_t rank) {
  const TensorTypeNode& t = tensorTypeOf(v);
  int64_t n = 1;
  for (const Dim& d : t.shape)
    n *= d.value;
  if (n == 1) return t.ndim() == 0 ? v : Expr(makeCall("reshape", {v}, {{"newshape", std::vector<int64_t>{}}}));
  std::vector<int64_t> shape{n};
  for (int64_t i = axis + 1; i < rank; ++i)
    shape.push_back(1);
  if (t.ndim() == 1 && shape.size() == 1) return v;
  return makeCall("reshape", {v}, {{"newshape", shape}});
}

QLinearAddConstants qlinearAddConstants(float aScale, float aZp, float bScale, float bZp, float yScale, float yZp,
                                        bool aScalarAlongInnermost) {
  QLinearAddConstants k;
  const float ra = aScale / yScale, rb = bScale / yScale;
  k.swapped = aScalarAlongInnermost;
  k.first = k.swapped ? rb : ra;
  k.second = k.swapped ? ra : rb;
  const float firstZp = k.swapped ? bZp : aZp, secondZp = k.swapped ? aZp : bZp;
  const float secondTerm = k.second * secondZp;
  k.fixed = yZp - std::fmaf(k.first, firstZp, secondTerm);
  return k;
}

bool scalarAlongInnermost(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  if (out.empty() || out.back() <= 1) return false;
  return in.empty() || in.back() == 1;
}

}  // namespace loom::graph::qnn
