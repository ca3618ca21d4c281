// Reductions: sum, mean, max, min, prod over a list of axes; argmax and argmin along one axis.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/graph/OpsInternal.h"

namespace loom::graph {

namespace {

/// The reduced axes (normalized, sorted); empty axis list means every axis.
std::vector<bool> reducedMask(const CallNode& call, size_t ndim) {
  const auto& axes = call.attrs.getInts("axis");
  std::vector<bool> mask(ndim, axes.empty());
  for (int64_t a : axes)
    mask[normAxis(call, a, int64_t(ndim))] = true;
  return mask;
}

Type reduceRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  std::vector<bool> mask = reducedMask(call, d.ndim());
  bool keep = call.attrs.getInt("keepdims") != 0;
  Shape out;
  for (size_t i = 0; i < d.ndim(); ++i) {
    if (!mask[i])
      out.push_back(d.shape[i]);
    else if (keep)
      out.push_back(Dim(1));
  }
  return tensorType(out, d.dtype);
}

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

HostTensor reduceKernel(const CallNode& call, const std::vector<HostTensor>& in,
                        const TensorTypeNode& outT, ReduceKind kind) {
  const HostTensor& x = in[0];
  std::vector<bool> mask = reducedMask(call, x.shape.size());
  std::vector<int64_t> kept; // output shape with reduced dims as 1
  for (size_t i = 0; i < x.shape.size(); ++i)
    kept.push_back(mask[i] ? 1 : x.shape[i]);
  HostTensor r(kept, outT.dtype);
  double init = kind == ReduceKind::Max    ? -std::numeric_limits<double>::infinity()
                : kind == ReduceKind::Min  ? std::numeric_limits<double>::infinity()
                : kind == ReduceKind::Prod ? 1.0
                                           : 0.0;
  std::fill(r.v.begin(), r.v.end(), init);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < x.numel(); ++i) {
    unravel(i, x.shape, idx);
    double& acc = r.v[broadcastIndex(idx, kept)];
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      acc += x.v[i];
      break;
    case ReduceKind::Max:
      acc = std::max(acc, x.v[i]);
      break;
    case ReduceKind::Min:
      acc = std::min(acc, x.v[i]);
      break;
    case ReduceKind::Prod:
      acc *= x.v[i];
      break;
    }
  }
  if (kind == ReduceKind::Mean) {
    double n = double(x.numel()) / double(std::max<int64_t>(r.numel(), 1));
    for (double& v : r.v)
      v /= n;
  }
  r.shape = outT.staticShape();
  return r;
}

Type argRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  bool keep = call.attrs.getInt("keepdims") != 0;
  Shape out;
  for (size_t i = 0; i < d.ndim(); ++i) {
    if (int64_t(i) != axis)
      out.push_back(d.shape[i]);
    else if (keep)
      out.push_back(Dim(1));
  }
  return tensorType(out, DataType::Int(64));
}

HostTensor argKernel(const CallNode& call, const std::vector<HostTensor>& in,
                     const TensorTypeNode& outT, bool isMax) {
  const HostTensor& x = in[0];
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(x.shape.size());
  bool last = call.attrs.getInt("select_last_index") != 0;
  int64_t n = x.shape[axis], inner = 1;
  for (size_t k = axis + 1; k < x.shape.size(); ++k)
    inner *= x.shape[k];
  int64_t outer = x.numel() / std::max<int64_t>(n * inner, 1);
  HostTensor r(outT.staticShape(), outT.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j) {
        double v = x.v[(o * n + j) * inner + i], b = x.v[(o * n + best) * inner + i];
        bool better = isMax ? (v > b || (last && v == b)) : (v < b || (last && v == b));
        if (better) best = j;
      }
      r.v[o * inner + i] = double(best);
    }
  return r;
}

void reduceOp(const std::string& name, ReduceKind kind) {
  defineOp(
      name, 1, OpPattern::CommReduce,
      {attrInts("axis", std::vector<int64_t>{}), attrInt("keepdims", 0)}, reduceRel,
      [kind](const CallNode& c, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
        return reduceKernel(c, in, o, kind);
      },
      name + " over axes (empty: all)");
}

} // namespace

void registerReduceOps() {
  reduceOp("sum", ReduceKind::Sum);
  reduceOp("mean", ReduceKind::Mean);
  reduceOp("max", ReduceKind::Max);
  reduceOp("min", ReduceKind::Min);
  reduceOp("prod", ReduceKind::Prod);
  for (bool isMax : {true, false})
    defineOp(
        isMax ? "argmax" : "argmin", 1, OpPattern::CommReduce,
        {attrInt("axis", 0), attrInt("keepdims", 1), attrInt("select_last_index", 0)}, argRel,
        [isMax](const CallNode& c, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
          return argKernel(c, in, o, isMax);
        },
        std::string(isMax ? "index of the largest" : "index of the smallest") +
            " entry along axis");
}

} // namespace loom::graph
