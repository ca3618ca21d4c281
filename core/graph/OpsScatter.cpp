// scatter_elements and scatter_nd (ONNX ScatterElements/Scatter and ScatterND): data with
// updates written (or combined by add/mul/max/min) at indexed positions.
#include <algorithm>

#include "core/graph/OpsInternal.h"

namespace loom::graph {

namespace {

void checkReduction(const CallNode& call) {
  const std::string& r = call.attrs.getString("reduction");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    LOOM_TYPE_FAIL(call) << "reduction must be none, add, mul, max or min, not '" << r << "'";
}

double combine(const std::string& r, double acc, double v) {
  if (r == "add") return acc + v;
  if (r == "mul") return acc * v;
  if (r == "max") return std::max(acc, v);
  if (r == "min") return std::min(acc, v);
  return v;
}

int64_t normIndex(const CallNode& call, double raw, int64_t n) {
  int64_t id = int64_t(raw);
  if (id < 0) id += n;
  if (id < 0 || id >= n)
    LOOM_THROW(ValueError) << callDescription(call) << ": index " << int64_t(raw) << " out of range for " << n
                           << " entries";
  return id;
}

Type scatterElementsRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const TensorTypeNode& ind = argTensor(call, args, 1);
  const TensorTypeNode& upd = argTensor(call, args, 2);
  checkReduction(call);
  if (!ind.dtype.isIntegral()) LOOM_TYPE_FAIL(call) << "indices must be integers, got " << typeStr(args[1]);
  if (ind.ndim() != d.ndim() || !ind.isStatic() || !upd.isStatic() || ind.staticShape() != upd.staticShape() ||
      upd.dtype != d.dtype)
    LOOM_TYPE_FAIL(call) << "indices " << typeStr(args[1]) << " and updates " << typeStr(args[2])
                         << " must have one static shape and the rank of data " << typeStr(args[0]);
  normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  return tensorType(d.shape, d.dtype);
}

HostTensor scatterElementsKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  const HostTensor &x = in[0], &ind = in[1], &upd = in[2];
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(x.shape.size()));
  const std::string& red = call.attrs.getString("reduction");
  HostTensor r = x;
  r.dtype = outT.dtype;
  std::vector<int64_t> idx, st = x.strides();
  for (int64_t u = 0; u < ind.numel(); ++u) {
    unravel(u, ind.shape, idx);
    idx[size_t(axis)] = normIndex(call, ind.v[size_t(u)], x.shape[size_t(axis)]);
    int64_t dst = 0;
    for (size_t k = 0; k < idx.size(); ++k) dst += idx[k] * st[k];
    r.v[size_t(dst)] = combine(red, r.v[size_t(dst)], upd.v[size_t(u)]);
  }
  return r;
}

Type scatterNDRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const TensorTypeNode& ind = argTensor(call, args, 1);
  const TensorTypeNode& upd = argTensor(call, args, 2);
  checkReduction(call);
  if (!ind.dtype.isIntegral() || !ind.isStatic() || !d.isStatic() || !upd.isStatic() || ind.ndim() < 1)
    LOOM_TYPE_FAIL(call) << "needs static data, integer indices and updates, got " << typeStr(args[0]) << ", "
                         << typeStr(args[1]) << ", " << typeStr(args[2]);
  std::vector<int64_t> ds = d.staticShape(), is = ind.staticShape(), want(is.begin(), is.end() - 1);
  size_t m = size_t(is.back());
  if (m > ds.size()) LOOM_TYPE_FAIL(call) << "index tuples of " << m << " entries for data of rank " << ds.size();
  want.insert(want.end(), ds.begin() + long(m), ds.end());
  if (upd.staticShape() != want || upd.dtype != d.dtype)
    LOOM_TYPE_FAIL(call) << "updates " << typeStr(args[2]) << " must be " << typeStr(tensorType(want, d.dtype));
  return tensorType(d.shape, d.dtype);
}

HostTensor scatterNDKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  const HostTensor &x = in[0], &ind = in[1], &upd = in[2];
  const std::string& red = call.attrs.getString("reduction");
  HostTensor r = x;
  r.dtype = outT.dtype;
  size_t m = size_t(ind.shape.back());
  int64_t slice = 1;
  for (size_t k = m; k < x.shape.size(); ++k) slice *= x.shape[k];
  std::vector<int64_t> st = x.strides();
  for (int64_t u = 0; u < ind.numel() / int64_t(std::max<size_t>(m, 1)); ++u) {
    int64_t base = 0;
    for (size_t j = 0; j < m; ++j) base += normIndex(call, ind.v[size_t(u) * m + j], x.shape[j]) * st[j];
    for (int64_t e = 0; e < slice; ++e)
      r.v[size_t(base + e)] = combine(red, r.v[size_t(base + e)], upd.v[size_t(u * slice + e)]);
  }
  return r;
}

} // namespace

void registerScatterOps() {
  defineOp("scatter_elements", 3, OpPattern::Opaque, {attrInt("axis", 0), attrString("reduction", std::string("none"))},
           scatterElementsRel, scatterElementsKernel,
           "data with updates[u] written at u with u[axis] = indices[u] (ONNX ScatterElements), combined by "
           "reduction (none: the last write wins)");
  defineOp("scatter_nd", 3, OpPattern::Opaque, {attrString("reduction", std::string("none"))}, scatterNDRel,
           scatterNDKernel,
           "data with the slices updates[u] written at the index tuples indices[u] (ONNX ScatterND)");
}

} // namespace loom::graph
