// Host implementations of the data-dependent ops: NonZero, TopK, NonMaxSuppression, Unique.
// Values are compared as long double (exact for every integer type and for float16/32/64);
// outputs that carry input values copy the input's bytes, so they are exact in any dtype.
#include "runtime/DataDependentOps.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "runtime/RuntimeFailure.h"

namespace loom::runtime::datadep {

namespace {

using Real = long double;

const DType kI64{DType::Int, 64, 1};

std::string shapeText(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

/// Reads element `i` of `a` as a number; RuntimeFailure for dtypes without a numeric reading.
Real valueAt(const NDArray& a, int64_t i) {
  const DType t = a.dtype();
  const char* p = static_cast<const char*>(a.data()) + size_t(i) * t.bytes();
  switch (t.code) {
  case DType::Float:
    if (t.bits == 32) return *reinterpret_cast<const float*>(p);
    if (t.bits == 64) return *reinterpret_cast<const double*>(p);
    break;
  case DType::BFloat: {
    if (t.bits != 16) break;
    uint32_t u = uint32_t(*reinterpret_cast<const uint16_t*>(p)) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  case DType::Bool: return *reinterpret_cast<const uint8_t*>(p) ? 1 : 0;
  case DType::Int:
    switch (t.bits) {
    case 8: return *reinterpret_cast<const int8_t*>(p);
    case 16: return *reinterpret_cast<const int16_t*>(p);
    case 32: return *reinterpret_cast<const int32_t*>(p);
    case 64: return Real(*reinterpret_cast<const int64_t*>(p));
    }
    break;
  case DType::UInt:
    switch (t.bits) {
    case 8: return *reinterpret_cast<const uint8_t*>(p);
    case 16: return *reinterpret_cast<const uint16_t*>(p);
    case 32: return *reinterpret_cast<const uint32_t*>(p);
    case 64: return Real(*reinterpret_cast<const uint64_t*>(p));
    }
    break;
  default: break;
  }
  throw RuntimeFailure("data-dependent op: elements of type " + t.str() + " are not supported");
}

/// One integer from a 1-element (or scalar) tensor; `def` when it is empty.
int64_t scalarInt(const NDArray& a, int64_t def, const char* what) {
  if (a.numel() == 0) return def;
  if (a.numel() != 1) throw RuntimeFailure(std::string(what) + " must have one element, got " + shapeText(a.shape()));
  return int64_t(valueAt(a, 0));
}

double scalarFloat(const NDArray& a, double def, const char* what) {
  if (a.numel() == 0) return def;
  if (a.numel() != 1) throw RuntimeFailure(std::string(what) + " must have one element, got " + shapeText(a.shape()));
  return double(valueAt(a, 0));
}

int64_t normAxis(int64_t axis, size_t rank, const char* op) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    throw RuntimeFailure(std::string(op) + ": axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

/// outer x n x inner view of `shape` around `axis`.
void split(const std::vector<int64_t>& shape, int64_t axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[size_t(d)];
  n = shape[size_t(axis)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
}

std::vector<NDArray> nonZero(const NDArray& x) {
  const std::vector<int64_t>& s = x.shape();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (valueAt(x, i) != 0) hits.push_back(i);  // NaN counts as nonzero
  int64_t n = int64_t(hits.size());
  size_t rank = s.size();
  NDArray r = NDArray::empty({int64_t(std::max<size_t>(rank, 1)), n}, kI64);
  int64_t* o = r.as<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t flat = hits[size_t(k)];
    if (rank == 0) o[k] = 0;
    for (size_t d = rank; d-- > 0;) {
      o[int64_t(d) * n + k] = flat % s[d];
      flat /= s[d];
    }
  }
  return {r};
}

std::vector<NDArray> topK(const Attrs& at, const NDArray& x, const NDArray& kArr) {
  const std::vector<int64_t>& s = x.shape();
  if (s.empty()) throw RuntimeFailure("topk: the input must have rank >= 1");
  int64_t axis = normAxis(at.axis, s.size(), "topk");
  int64_t outer, n, inner;
  split(s, axis, outer, n, inner);
  if (kArr.numel() != 1) throw RuntimeFailure("topk: K must have one element, got " + shapeText(kArr.shape()));
  int64_t k = int64_t(valueAt(kArr, 0));
  if (k < 0 || k > n)
    throw RuntimeFailure("topk: K = " + std::to_string(k) + " is out of range for axis " + std::to_string(axis) +
                         " of extent " + std::to_string(n));
  std::vector<int64_t> os = s;
  os[size_t(axis)] = k;
  NDArray vals = NDArray::empty(os, x.dtype()), idx = NDArray::empty(os, kI64);
  size_t eb = x.dtype().bytes();
  const char* xp = static_cast<const char*>(x.data());
  char* vp = static_cast<char*>(vals.data());
  int64_t* ip = idx.as<int64_t>();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<Real> v(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) v[size_t(j)] = valueAt(x, (o * n + j) * inner + i);
      std::iota(order.begin(), order.end(), 0);
      // Ties go to the lower index (ONNX Runtime's order); results are always sorted.
      auto better = [&](int64_t a, int64_t b) {
        Real va = v[size_t(a)], vb = v[size_t(b)];
        if (va != vb) return at.largest ? va > vb : va < vb;
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
      for (int64_t j = 0; j < k; ++j) {
        int64_t src = (o * n + order[size_t(j)]) * inner + i, dst = (o * k + j) * inner + i;
        std::memcpy(vp + size_t(dst) * eb, xp + size_t(src) * eb, eb);
        ip[dst] = order[size_t(j)];
      }
    }
  return {vals, idx};
}

/// Intersection over union above the threshold (ONNX's definition, in float like ONNX Runtime).
bool suppressByIou(const float* a, const float* b, int64_t centerPointBox, float threshold) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (centerPointBox == 0) {
    ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]), ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
    bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]), by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
  } else {
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  }
  float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (ix1 <= ix0) return false;
  float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (iy1 <= iy0) return false;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0) return false;
  float areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  float uni = areaA + areaB - inter;
  if (areaA <= 0 || areaB <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

std::vector<NDArray> nms(const Attrs& at, const std::vector<NDArray>& in) {
  const NDArray &boxes = in[0], &scores = in[1];
  const auto &bs = boxes.shape(), &ss = scores.shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    throw RuntimeFailure("nms: boxes must be [batches, boxes, 4] and scores [batches, classes, boxes], got " +
                         shapeText(bs) + " and " + shapeText(ss));
  int64_t batches = bs[0], numBoxes = bs[1], classes = ss[1];
  int64_t maxPer = std::max<int64_t>(in.size() > 2 ? scalarInt(in[2], 0, "nms: max_output_boxes_per_class") : 0, 0);
  float iou = float(in.size() > 3 ? scalarFloat(in[3], 0, "nms: iou_threshold") : 0);
  bool useScore = at.hasScoreThreshold && in.size() > 4 && in[4].numel() > 0;
  float scoreThr = useScore ? float(scalarFloat(in[4], 0, "nms: score_threshold")) : 0.f;
  std::vector<float> b(static_cast<size_t>(boxes.numel())), sc(static_cast<size_t>(scores.numel()));
  for (int64_t i = 0; i < boxes.numel(); ++i) b[size_t(i)] = float(valueAt(boxes, i));
  for (int64_t i = 0; i < scores.numel(); ++i) sc[size_t(i)] = float(valueAt(scores, i));
  std::vector<int64_t> sel;
  std::vector<int64_t> cand, kept;
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t ci = 0; ci < classes; ++ci) {
      const float* s = sc.data() + (bi * classes + ci) * numBoxes;
      const float* bb = b.data() + bi * numBoxes * 4;
      cand.clear();
      kept.clear();
      for (int64_t j = 0; j < numBoxes; ++j)
        if (!useScore || s[j] > scoreThr) cand.push_back(j);
      // Highest score first; equal scores: the lower box index first.
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      for (int64_t j : cand) {
        if (int64_t(kept.size()) >= maxPer) break;
        bool keep = true;
        for (int64_t q : kept)
          if (suppressByIou(bb + j * 4, bb + q * 4, at.centerPointBox, iou)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(j);
        sel.insert(sel.end(), {bi, ci, j});
      }
    }
  NDArray r = NDArray::empty({int64_t(sel.size() / 3), 3}, kI64);
  if (!sel.empty()) std::memcpy(r.data(), sel.data(), sel.size() * sizeof(int64_t));
  return {r};
}

std::vector<NDArray> unique(const Attrs& at, const NDArray& x) {
  std::vector<int64_t> s = x.shape();
  int64_t axis = 0;
  if (!at.hasAxis) s = {x.numel()};
  else if (s.empty()) throw RuntimeFailure("unique: axis given for a scalar input");
  else axis = normAxis(at.axis, s.size(), "unique");
  int64_t outer, n, inner;
  split(s, axis, outer, n, inner);
  // Slice j: the elements x[o, j, i] in (o, i) order.
  std::vector<Real> v(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) v[size_t(i)] = valueAt(x, i);
  auto cmp = [&](int64_t a, int64_t b) {  // -1, 0, 1: lexicographic over the slices
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        Real va = v[size_t((o * n + a) * inner + i)], vb = v[size_t((o * n + b) * inner + i)];
        if (va < vb) return -1;
        if (va > vb) return 1;
      }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
  // Groups of equal slices in sorted order; each group's first (lowest) index is first.
  std::vector<int64_t> first, count, groupOf(static_cast<size_t>(n));
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
      first.push_back(order[k]);
      count.push_back(0);
    }
    groupOf[size_t(order[k])] = int64_t(first.size() - 1);
    ++count.back();
  }
  std::vector<int64_t> rank(first.size());  // output position of each group
  std::iota(rank.begin(), rank.end(), 0);
  if (!at.sorted) {  // order of first occurrence
    std::vector<int64_t> g(first.size());
    std::iota(g.begin(), g.end(), 0);
    std::sort(g.begin(), g.end(), [&](int64_t a, int64_t b) { return first[size_t(a)] < first[size_t(b)]; });
    for (size_t p = 0; p < g.size(); ++p) rank[size_t(g[p])] = int64_t(p);
  }
  int64_t u = int64_t(first.size());
  std::vector<int64_t> ys = s;
  ys[size_t(axis)] = u;
  NDArray y = NDArray::empty(ys, x.dtype()), ind = NDArray::empty({u}, kI64), inv = NDArray::empty({n}, kI64),
          cnt = NDArray::empty({u}, kI64);
  size_t eb = x.dtype().bytes();
  const char* xp = static_cast<const char*>(x.data());
  char* yp = static_cast<char*>(y.data());
  for (int64_t g = 0; g < u; ++g) {
    int64_t p = rank[size_t(g)];
    ind.as<int64_t>()[p] = first[size_t(g)];
    cnt.as<int64_t>()[p] = count[size_t(g)];
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(yp + size_t((o * u + p) * inner) * eb, xp + size_t((o * n + first[size_t(g)]) * inner) * eb,
                  size_t(inner) * eb);
  }
  for (int64_t j = 0; j < n; ++j) inv.as<int64_t>()[j] = rank[size_t(groupOf[size_t(j)])];
  return {y, ind, inv, cnt};
}

}  // namespace

bool isKnownOp(const std::string& op) { return op == "nonzero" || op == "topk" || op == "nms" || op == "unique"; }

std::vector<NDArray> run(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& in) {
  auto need = [&](size_t lo, size_t hi) {
    if (in.size() < lo || in.size() > hi)
      throw RuntimeFailure(op + ": " + std::to_string(in.size()) + " inputs, expected " + std::to_string(lo) +
                           (lo == hi ? "" : " to " + std::to_string(hi)));
  };
  if (op == "nonzero") {
    need(1, 1);
    return nonZero(in[0]);
  }
  if (op == "topk") {
    need(2, 2);
    return topK(attrs, in[0], in[1]);
  }
  if (op == "nms") {
    need(2, 5);
    return nms(attrs, in);
  }
  if (op == "unique") {
    need(1, 1);
    return unique(attrs, in[0]);
  }
  throw RuntimeFailure("unknown data-dependent op '" + op + "'");
}

}  // namespace loom::runtime::datadep
