// Injective data-movement ops: reshape, transpose, concatenate, split, slice, take, pad, tile, ...
#include <algorithm>
#include <limits>

#include "core/graph/OpsInternal.h"
#include "core/graph/SymDim.h"
#include "core/tir/Op.h"

namespace loom::graph {

namespace {

Type reshapeRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const auto& ns = call.attrs.getInts("newshape");
  const std::string& sym = call.attrs.getString("symbolic_shape");
  if (!sym.empty()) {
    // A symbolic target: its element count must provably equal the input's.
    Shape out = parseDimsText(sym);
    if (out.size() != ns.size())
      LOOM_TYPE_FAIL(call) << "symbolic_shape \"" << sym << "\" and newshape " << attrValueStr(ns)
                           << " differ in rank";
    Dim a = dimProduct(d.shape), b = dimProduct(out);
    if (!dimsProvablyEqual(a, b))
      LOOM_TYPE_FAIL(call) << "cannot reshape " << typeStr(args[0]) << " (" << a.str() << " elements) to "
                           << shapeStr(out) << " (" << b.str() << " elements)";
    return tensorType(out, d.dtype);
  }
  Shape out;
  for (int64_t v : ns) {
    if (v < 0)
      LOOM_TYPE_FAIL(call) << "newshape " << attrValueStr(ns)
                           << " must be fully resolved (no -1 or 0)";
    out.push_back(Dim(v));
  }
  if (d.isStatic() && d.numel() != HostTensor::count(ns))
    LOOM_TYPE_FAIL(call) << "cannot reshape " << typeStr(args[0]) << " (" << d.numel()
                         << " elements) to " << attrValueStr(ns) << " (" << HostTensor::count(ns)
                         << " elements)";
  // Symbolic dims are at least 1: the input's element count is a nonzero multiple of its static
  // dims' product, which a static target's count must then be (a target with a 0 dim, or 50
  // elements from (N, 24), provably differs; the evaluator once wrote past its array on one).
  if (!d.isStatic()) {
    int64_t staticPart = 1;
    bool unknown = false;
    for (const Dim& x : d.shape) {
      if (x.isStatic()) staticPart *= x.value;
      else unknown |= x.name.empty();
    }
    const int64_t target = HostTensor::count(ns);
    if (!unknown && staticPart > 0 && (target < staticPart || target % staticPart != 0))
      LOOM_TYPE_FAIL(call) << "cannot reshape " << typeStr(args[0]) << " (" << dimProduct(d.shape).str()
                           << " elements, a multiple of " << staticPart << ") to " << attrValueStr(ns) << " ("
                           << target << " elements)";
  }
  return tensorType(out, d.dtype);
}

std::vector<int64_t> transposeAxes(const CallNode& call, int64_t ndim) {
  std::vector<int64_t> axes = call.attrs.getInts("axes");
  if (axes.empty())
    for (int64_t i = ndim - 1; i >= 0; --i)
      axes.push_back(i);
  return axes;
}

Type transposeRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  std::vector<int64_t> axes = transposeAxes(call, int64_t(d.ndim()));
  if (axes.size() != d.ndim())
    LOOM_TYPE_FAIL(call) << "axes " << attrValueStr(axes) << " do not match rank " << d.ndim();
  std::vector<bool> seen(d.ndim(), false);
  Shape out;
  for (int64_t a : axes) {
    int64_t n = normAxis(call, a, int64_t(d.ndim()));
    if (seen[n]) LOOM_TYPE_FAIL(call) << "axes " << attrValueStr(axes) << " repeat axis " << n;
    seen[n] = true;
    out.push_back(d.shape[n]);
  }
  return tensorType(out, d.dtype);
}

HostTensor transposeKernel(const CallNode& call, const std::vector<HostTensor>& in,
                           const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  int64_t nd = int64_t(x.shape.size());
  std::vector<int64_t> axes = transposeAxes(call, nd);
  for (int64_t& a : axes)
    if (a < 0) a += nd;
  HostTensor r(outT.staticShape(), outT.dtype);
  std::vector<int64_t> st = x.strides(), idx;
  for (int64_t i = 0; i < r.numel(); ++i) {
    unravel(i, r.shape, idx);
    int64_t src = 0;
    for (int64_t k = 0; k < nd; ++k)
      src += idx[k] * st[axes[k]];
    r.v[i] = x.v[src];
  }
  return r;
}

Type concatRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& first = argTensor(call, args, 0);
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(first.ndim()));
  Shape out = first.shape;
  for (size_t i = 1; i < args.size(); ++i) {
    const TensorTypeNode& t = argTensor(call, args, i);
    if (t.ndim() != first.ndim() || t.dtype != first.dtype)
      LOOM_TYPE_FAIL(call) << "input " << i << " " << typeStr(args[i]) << " does not match input 0 "
                           << typeStr(args[0]);
    for (size_t k = 0; k < t.ndim(); ++k) {
      if (int64_t(k) == axis) continue;
      if (t.shape[k].isStatic() && first.shape[k].isStatic() &&
          t.shape[k].value != first.shape[k].value)
        LOOM_TYPE_FAIL(call) << "input " << i << " " << typeStr(args[i]) << " differs from input 0 "
                             << typeStr(args[0]) << " in dimension " << k
                             << " (concatenating along axis " << axis << ")";
    }
    out[axis] = dimAdd(out[axis], t.shape[axis]);
  }
  return tensorType(out, first.dtype);
}

HostTensor concatKernel(const CallNode& call, const std::vector<HostTensor>& in,
                        const TensorTypeNode& outT) {
  HostTensor r(outT.staticShape(), outT.dtype);
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(r.shape.size());
  int64_t inner = 1, outer = 1;
  for (size_t k = axis + 1; k < r.shape.size(); ++k)
    inner *= r.shape[k];
  for (int64_t k = 0; k < axis; ++k)
    outer *= r.shape[k];
  int64_t off = 0, total = r.shape[axis];
  for (const HostTensor& t : in) {
    int64_t n = t.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n * inner; ++j)
        r.v[(o * total + off) * inner + j] = t.v[o * n * inner + j];
    off += n;
  }
  return r;
}

Type splitRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  const auto& sizes = call.attrs.getInts("sections");
  if (sizes.empty()) LOOM_TYPE_FAIL(call) << "sections must not be empty";
  int64_t total = 0;
  std::vector<Type> fields;
  for (int64_t s : sizes) {
    if (s < 0) LOOM_TYPE_FAIL(call) << "negative section size in " << attrValueStr(sizes);
    total += s;
    Shape sh = d.shape;
    sh[axis] = Dim(s);
    fields.push_back(tensorType(sh, d.dtype));
  }
  if (d.shape[axis].isStatic() && d.shape[axis].value != total)
    LOOM_TYPE_FAIL(call) << "sections " << attrValueStr(sizes) << " sum to " << total
                         << " but dimension " << axis << " of " << typeStr(args[0]) << " is "
                         << d.shape[axis].value;
  return tupleType(fields);
}

std::vector<runtime::NDArray>
splitKernel(const CallNode& call, const std::vector<runtime::NDArray>& inputs, const Type&) {
  HostTensor x = fromNDArray(inputs[0]);
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(x.shape.size());
  int64_t inner = 1, outer = 1;
  for (size_t k = axis + 1; k < x.shape.size(); ++k)
    inner *= x.shape[k];
  for (int64_t k = 0; k < axis; ++k)
    outer *= x.shape[k];
  std::vector<runtime::NDArray> outs;
  int64_t off = 0, total = x.shape[axis];
  for (int64_t n : call.attrs.getInts("sections")) {
    std::vector<int64_t> sh = x.shape;
    sh[axis] = n;
    HostTensor r(sh, x.dtype);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n * inner; ++j)
        r.v[o * n * inner + j] = x.v[(o * total + off) * inner + j];
    off += n;
    outs.push_back(toNDArray(r));
  }
  return outs;
}

/// Normalized slice parameters per axis of the input (start, step, count).
struct SliceDims {
  std::vector<int64_t> start, step, count;
};

SliceDims sliceDims(const CallNode& call, const std::vector<int64_t>& shape) {
  const auto& b = call.attrs.getInts("begin");
  const auto& e = call.attrs.getInts("end");
  const auto& s = call.attrs.getInts("strides");
  std::vector<int64_t> axes = call.attrs.getInts("axes");
  size_t nd = shape.size();
  if (axes.empty())
    for (size_t i = 0; i < b.size(); ++i)
      axes.push_back(int64_t(i));
  if (b.size() != axes.size() || e.size() != axes.size() || (!s.empty() && s.size() != axes.size()))
    LOOM_TYPE_FAIL(call) << "begin, end, strides and axes must have the same length";
  SliceDims d;
  for (size_t i = 0; i < nd; ++i) {
    d.start.push_back(0);
    d.step.push_back(1);
    d.count.push_back(shape[i]);
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = normAxis(call, axes[k], int64_t(nd));
    int64_t n = shape[a], st = s.empty() ? 1 : s[k];
    if (st == 0) LOOM_TYPE_FAIL(call) << "slice step must not be 0";
    if (st == std::numeric_limits<int64_t>::min()) LOOM_TYPE_FAIL(call) << "slice step " << st << " is out of range";
    int64_t lo = b[k], hi = e[k];
    if (lo < 0) lo += n;
    if (hi < 0) hi += n;
    if (st > 0) {
      lo = std::clamp<int64_t>(lo, 0, n);
      hi = std::clamp<int64_t>(hi, 0, n);
      // In 128 bits: a step near INT64_MAX (ONNX's and torch's "to the end" idiom) overflowed.
      d.count[a] = hi > lo ? int64_t((__int128(hi) - lo + st - 1) / st) : 0;
    } else {
      lo = std::clamp<int64_t>(lo, -1, n - 1);
      hi = std::clamp<int64_t>(hi, -1, n - 1);
      d.count[a] = lo > hi ? int64_t((__int128(lo) - hi - st - 1) / -__int128(st)) : 0;
    }
    d.start[a] = lo;
    d.step[a] = st;
  }
  return d;
}

/// The element count of slice entry `k` over a symbolic dim `n` (ONNX Slice's clamping).
Dim symbolicSliceCount(const CallNode& call, const Dim& n, size_t k) {
  if (n.name.empty()) return Dim::any();
  const auto& s = call.attrs.getInts("strides");
  int64_t b = call.attrs.getInts("begin")[k], e = call.attrs.getInts("end")[k], st = s.empty() ? 1 : s[k];
  tir::Expr len = dimExpr(n);
  auto c = [](int64_t v) { return tir::intImm(DataType::Int(64), v); };
  auto norm = [&](int64_t v) { return v < 0 ? len + c(v) : c(v); };
  tir::Expr lo = norm(b), hi = norm(e), count;
  if (st > 0) {
    lo = tir::min(tir::max(lo, c(0)), len);
    hi = tir::min(tir::max(hi, c(0)), len);
    count = tir::floordiv(tir::max(hi - lo, c(0)) - c(1), c(st)) + c(1);  // ceil without overflow
  } else {
    lo = tir::min(tir::max(lo, c(-1)), len - c(1));
    hi = tir::min(tir::max(hi, c(-1)), len - c(1));
    count = tir::floordiv(tir::max(lo - hi, c(0)) - c(1), c(-st)) + c(1);
  }
  return dimOf(count);
}

Type sliceRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  std::vector<int64_t> shape;
  std::vector<int64_t> axes = call.attrs.getInts("axes");
  if (axes.empty())
    for (size_t i = 0; i < call.attrs.getInts("begin").size(); ++i)
      axes.push_back(int64_t(i));
  // Static axes as numbers (symbolic ones as 1 here, their counts follow below).
  for (size_t i = 0; i < d.ndim(); ++i)
    shape.push_back(d.shape[i].isStatic() ? d.shape[i].value : 1);
  SliceDims sd = sliceDims(call, shape);
  Shape out;
  for (size_t i = 0; i < d.ndim(); ++i) {
    int64_t k = -1;
    for (size_t j = 0; j < axes.size(); ++j)
      if (normAxis(call, axes[j], int64_t(d.ndim())) == int64_t(i)) k = int64_t(j);
    if (k < 0 || d.shape[i].isStatic()) {
      out.push_back(k < 0 ? d.shape[i] : Dim(sd.count[i]));
      continue;
    }
    out.push_back(symbolicSliceCount(call, d.shape[i], size_t(k)));
  }
  return tensorType(out, d.dtype);
}

HostTensor sliceKernel(const CallNode& call, const std::vector<HostTensor>& in,
                       const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  SliceDims sd = sliceDims(call, x.shape);
  HostTensor r(sd.count, outT.dtype);
  std::vector<int64_t> st = x.strides(), idx;
  for (int64_t i = 0; i < r.numel(); ++i) {
    unravel(i, r.shape, idx);
    int64_t src = 0;
    for (size_t k = 0; k < idx.size(); ++k)
      src += (sd.start[k] + idx[k] * sd.step[k]) * st[k];
    r.v[i] = x.v[src];
  }
  return r;
}

Type takeRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const TensorTypeNode& ind = argTensor(call, args, 1);
  if (!ind.dtype.isIntegral())
    LOOM_TYPE_FAIL(call) << "indices must be integers, got " << typeStr(args[1]);
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  Shape out(d.shape.begin(), d.shape.begin() + axis);
  out.insert(out.end(), ind.shape.begin(), ind.shape.end());
  out.insert(out.end(), d.shape.begin() + axis + 1, d.shape.end());
  return tensorType(out, d.dtype);
}

HostTensor takeKernel(const CallNode& call, const std::vector<HostTensor>& in,
                      const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  const HostTensor& ind = in[1];
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(x.shape.size());
  int64_t n = x.shape[axis], inner = 1, outer = 1;
  for (size_t k = axis + 1; k < x.shape.size(); ++k)
    inner *= x.shape[k];
  for (int64_t k = 0; k < axis; ++k)
    outer *= x.shape[k];
  HostTensor r(outT.staticShape(), outT.dtype);
  int64_t ni = ind.numel();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < ni; ++j) {
      int64_t id = int64_t(ind.v[j]);
      if (id < 0) id += n;
      if (id < 0 || id >= n)
        LOOM_THROW(ValueError) << callDescription(call) << ": index " << int64_t(ind.v[j])
                               << " out of range for " << n << " entries";
      for (int64_t i = 0; i < inner; ++i)
        r.v[(o * ni + j) * inner + i] = x.v[(o * n + id) * inner + i];
    }
  return r;
}

Type broadcastToRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const auto& s = call.attrs.getInts("shape");
  const std::string& sym = call.attrs.getString("symbolic_shape");
  Shape target = sym.empty() ? Shape(s.begin(), s.end()) : parseDimsText(sym);
  return tensorType(broadcastShapes(call, d.shape, target), d.dtype);
}

HostTensor broadcastToKernel(const CallNode&, const std::vector<HostTensor>& in,
                             const TensorTypeNode& outT) {
  HostTensor r(outT.staticShape(), outT.dtype);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < r.numel(); ++i) {
    unravel(i, r.shape, idx);
    r.v[i] = in[0].v[broadcastIndex(idx, in[0].shape)];
  }
  return r;
}

Type tileRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const auto& reps = call.attrs.getInts("reps");
  if (reps.size() != d.ndim())
    LOOM_TYPE_FAIL(call) << "reps " << attrValueStr(reps)
                         << " must have one entry per dimension of " << typeStr(args[0]);
  Shape out;
  for (size_t i = 0; i < d.ndim(); ++i)
    out.push_back(dimMul(d.shape[i], Dim(reps[i])));
  return tensorType(out, d.dtype);
}

HostTensor tileKernel(const CallNode&, const std::vector<HostTensor>& in,
                      const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  HostTensor r(outT.staticShape(), outT.dtype);
  std::vector<int64_t> idx, st = x.strides();
  for (int64_t i = 0; i < r.numel(); ++i) {
    unravel(i, r.shape, idx);
    int64_t src = 0;
    for (size_t k = 0; k < idx.size(); ++k)
      src += (idx[k] % x.shape[k]) * st[k];
    r.v[i] = x.v[src];
  }
  return r;
}

Type padRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const auto& pw = call.attrs.getInts("pad_width");
  if (pw.size() != 2 * d.ndim())
    LOOM_TYPE_FAIL(call) << "pad_width " << attrValueStr(pw)
                         << " must have 2 entries per dimension of " << typeStr(args[0]);
  const std::string& mode = call.attrs.getString("pad_mode");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    LOOM_TYPE_FAIL(call) << "pad_mode must be constant, edge or reflect, got \"" << mode << "\"";
  Shape out;
  for (size_t i = 0; i < d.ndim(); ++i) {
    Dim o = dimAdd(d.shape[i], Dim(pw[2 * i] + pw[2 * i + 1]));
    if (o.isStatic() && o.value < 0)
      LOOM_TYPE_FAIL(call) << "padding makes dimension " << i << " negative";
    out.push_back(o);
  }
  return tensorType(out, d.dtype);
}

HostTensor padKernel(const CallNode& call, const std::vector<HostTensor>& in,
                     const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  const auto& pw = call.attrs.getInts("pad_width");
  const std::string& mode = call.attrs.getString("pad_mode");
  double value = call.attrs.getFloat("pad_value");
  HostTensor r(outT.staticShape(), outT.dtype);
  std::vector<int64_t> idx, st = x.strides();
  for (int64_t i = 0; i < r.numel(); ++i) {
    unravel(i, r.shape, idx);
    int64_t src = 0;
    bool outside = false;
    for (size_t k = 0; k < idx.size(); ++k) {
      int64_t j = idx[k] - pw[2 * k], n = x.shape[k];
      if (j < 0 || j >= n) {
        if (mode == "constant" || n == 0)
          outside = true;
        else if (mode == "edge")
          j = std::clamp<int64_t>(j, 0, n - 1);
        else {
          int64_t period = 2 * (n - 1);
          if (period == 0)
            j = 0;
          else {
            j = ((j % period) + period) % period;
            if (j >= n) j = period - j;
          }
        }
      }
      src += j * st[k];
    }
    r.v[i] = outside ? value : x.v[src];
  }
  return r;
}

Type gatherElementsRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const TensorTypeNode& ind = argTensor(call, args, 1);
  if (!ind.dtype.isIntegral())
    LOOM_TYPE_FAIL(call) << "indices must be integers, got " << typeStr(args[1]);
  if (ind.ndim() != d.ndim())
    LOOM_TYPE_FAIL(call) << "indices " << typeStr(args[1]) << " must have the rank of data "
                         << typeStr(args[0]);
  normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  return tensorType(ind.shape, d.dtype);
}

HostTensor gatherElementsKernel(const CallNode& call, const std::vector<HostTensor>& in,
                                const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  const HostTensor& ind = in[1];
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(x.shape.size());
  HostTensor r(ind.shape, outT.dtype);
  std::vector<int64_t> idx, st = x.strides();
  for (int64_t i = 0; i < r.numel(); ++i) {
    unravel(i, ind.shape, idx);
    int64_t id = int64_t(ind.v[i]), n = x.shape[axis];
    if (id < 0) id += n;
    if (id < 0 || id >= n)
      LOOM_THROW(ValueError) << callDescription(call) << ": index " << int64_t(ind.v[i])
                             << " out of range for " << n << " entries";
    idx[axis] = id;
    int64_t src = 0;
    for (size_t k = 0; k < idx.size(); ++k)
      src += idx[k] * st[k];
    r.v[i] = x.v[src];
  }
  return r;
}

HostTensor cumsumKernel(const CallNode& call, const std::vector<HostTensor>& in,
                        const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(x.shape.size());
  bool exclusive = call.attrs.getInt("exclusive") != 0, reverse = call.attrs.getInt("reverse") != 0;
  int64_t n = x.shape[axis], inner = 1;
  for (size_t k = axis + 1; k < x.shape.size(); ++k)
    inner *= x.shape[k];
  int64_t outer = x.numel() / std::max<int64_t>(n * inner, 1);
  HostTensor r(x.shape, outT.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = 0;
      for (int64_t step = 0; step < n; ++step) {
        int64_t j = reverse ? n - 1 - step : step;
        double v = x.v[(o * n + j) * inner + i];
        if (!exclusive) acc += v;
        r.v[(o * n + j) * inner + i] = acc;
        if (exclusive) acc += v;
      }
    }
  return r;
}

} // namespace

void registerTransformOps() {
  defineOp(
      "arange", 1, OpPattern::Injective,
      {attrFloat("step", 1.0), attrInt("length", -1), attrString("symbolic_length", "")},
      [](const CallNode& call, const std::vector<Type>& args) -> Type {
        const TensorTypeNode& s = argTensor(call, args, 0);
        if (s.ndim() != 0) LOOM_TYPE_FAIL(call) << "start must be a scalar, got " << typeStr(args[0]);
        const std::string& sym = call.attrs.getString("symbolic_length");
        int64_t n = call.attrs.getInt("length");
        if (sym.empty() && n < 0) LOOM_TYPE_FAIL(call) << "needs a length or a symbolic_length";
        return tensorType(Shape{sym.empty() ? Dim(n) : Dim::symbol(sym)}, s.dtype);
      },
      [](const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
        HostTensor r(outT.staticShape(), outT.dtype);
        double step = call.attrs.getFloat("step");
        for (int64_t i = 0; i < r.numel(); ++i) r.v[size_t(i)] = in[0].v[0] + double(i) * step;
        return r;
      },
      "start, start + step, ... (length entries; ONNX Range with a symbolic limit)");
  defineOp("gather_elements", 2, OpPattern::Injective, {attrInt("axis", 0)}, gatherElementsRel,
           gatherElementsKernel,
           "out[i][j][k] = data[index[i][j][k]][j][k] for axis 0 (ONNX GatherElements)");
  defineOp(
      "cumsum", 1, OpPattern::Opaque,
      {attrInt("axis", 0), attrInt("exclusive", 0), attrInt("reverse", 0)},
      [](const CallNode& call, const std::vector<Type>& args) -> Type {
        const TensorTypeNode& d = argTensor(call, args, 0);
        normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
        return tensorType(d.shape, d.dtype);
      },
      cumsumKernel, "running sum along axis (optionally exclusive and/or reversed)");
  defineOp(
      "reshape", 1, OpPattern::Injective, {attrInts("newshape"), attrString("symbolic_shape", "")}, reshapeRel,
      [](const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
        HostTensor r = in[0];
        r.shape = outT.staticShape();
        return r;
      },
      "reshapes to a fully resolved shape (symbolic_shape: the target's dims as text, ';'-separated, "
      "where some are symbolic; newshape then holds -1 there)");
  defineOp("transpose", 1, OpPattern::Injective, {attrInts("axes", std::vector<int64_t>{})},
           transposeRel, transposeKernel, "permutes the dims (empty axes: reverse)");
  defineOp("concatenate", -1, OpPattern::Injective, {attrInt("axis", 0)}, concatRel, concatKernel,
           "joins the arguments along axis");
  OpDef split;
  split.name = "split";
  split.numInputs = 1;
  split.pattern = OpPattern::Injective;
  split.attrs = {attrInts("sections"), attrInt("axis", 0)};
  split.typeRel = splitRel;
  split.hostKernel = splitKernel;
  split.doc = "splits along axis into pieces of the given sizes (a tuple)";
  registerOp(std::move(split));
  defineOp("strided_slice", 1, OpPattern::Injective,
           {attrInts("begin"), attrInts("end"), attrInts("strides", std::vector<int64_t>{}),
            attrInts("axes", std::vector<int64_t>{})},
           sliceRel, sliceKernel, "numpy slicing (ONNX Slice semantics, clamped)");
  defineOp("take", 2, OpPattern::Injective, {attrInt("axis", 0)}, takeRel, takeKernel,
           "gathers entries along axis (ONNX Gather)");
  defineOp("broadcast_to", 1, OpPattern::Broadcast, {attrInts("shape"), attrString("symbolic_shape", "")},
           broadcastToRel,
           broadcastToKernel, "broadcasts to a shape (ONNX Expand)");
  defineOp("tile", 1, OpPattern::Injective, {attrInts("reps")}, tileRel, tileKernel,
           "repeats the tensor");
  defineOp("nn.pad", 1, OpPattern::Injective,
           {attrInts("pad_width"), attrFloat("pad_value", 0.0), attrString("pad_mode", "constant")},
           padRel, padKernel, "pads each dim by (before, after) pairs");
  defineOp(
      "shape_of", 1, OpPattern::Opaque, {},
      [](const CallNode& call, const std::vector<Type>& args) -> Type {
        return tensorType(std::vector<int64_t>{int64_t(argTensor(call, args, 0).ndim())},
                          DataType::Int(64));
      },
      [](const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
        HostTensor r(outT.staticShape(), outT.dtype);
        for (size_t i = 0; i < in[0].shape.size(); ++i)
          r.v[i] = double(in[0].shape[i]);
        return r;
      },
      "the shape of the argument as an int64 vector");
}

} // namespace loom::graph
