// TE computes of the injective graph ops: reshape, transpose, concatenate, split, strided_slice,
// take, broadcast_to, tile, pad, gather_elements, depth/space rearrangements, resize, shape_of,
// cumsum.
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/arith/ExprOrder.h"
#include "core/graph/Layout.h"
#include "core/te/Reduce.h"
#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

namespace {

using graph::CallNode;

std::vector<te::Tensor> one(te::Tensor t) { return {std::move(t)}; }

/// Row-major flat index of `i` in `shape` (static or symbolic extents).
Expr flatIndex(const std::vector<Expr>& i, const std::vector<Expr>& shape) {
  Expr f = ci(0);
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + i[d];
  return f;
}
/// The multi-index of flat index `f` in `shape`.
/// The outermost dim that is not of extent 1 takes the quotient whole (a modulo by a symbolic
/// extent would stay in the kernel: `[1, S, 8]` as `[S, 2, 4]`).
std::vector<Expr> unravelIndex(Expr f, const std::vector<Expr>& shape) {
  std::vector<Expr> idx(shape.size());
  size_t first = 0;
  while (first + 1 < shape.size() && tir::isConstInt(shape[first], 1)) ++first;
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = tir::isConstInt(shape[d], 1) ? ci(0) : (d <= first ? f : tir::floormod(f, shape[d]));
    f = tir::floordiv(f, shape[d]);
  }
  return idx;
}

/// A dim as a constant factor times a product of symbolic factors (`batch * 4` = 4 x {batch});
/// a dim that is no such product (`(H + 1) // 2`) is one symbolic factor of its own.
struct DimFactors {
  int64_t constant = 1;
  std::vector<Expr> symbols;  // sorted by arith::exprCompare
};

void addFactors(const Expr& e, DimFactors& f) {
  if (const int64_t* c = tir::asConstInt(e)) {
    f.constant *= *c;
    return;
  }
  if (auto* b = e.as<tir::BinaryNode>(); b && b->op == tir::BinOp::Mul) {
    addFactors(b->a, f);
    addFactors(b->b, f);
    return;
  }
  f.symbols.push_back(e);
}

bool sameFactors(const DimFactors& a, const DimFactors& b) {
  if (a.constant != b.constant || a.symbols.size() != b.symbols.size()) return false;
  for (size_t k = 0; k < a.symbols.size(); ++k)
    if (!arith::exprEqual(a.symbols[k], b.symbols[k])) return false;
  return true;
}

/// Whether a's symbols are a sub-multiset of b's (both sorted).
bool symbolsWithin(const DimFactors& a, const DimFactors& b) {
  size_t k = 0;
  for (const Expr& s : a.symbols) {
    while (k < b.symbols.size() && arith::exprCompare(b.symbols[k], s) < 0) ++k;
    if (k == b.symbols.size() || !arith::exprEqual(b.symbols[k], s)) return false;
    ++k;
  }
  return true;
}

/// The source index of a reshape from `inShape` to `outShape` at output index `i`. Over symbolic
/// shapes the dims are matched in groups of equal products (`[seq, batch, 256]` to `[seq, batch *
/// 4, 64]`: seq alone, then batch x 256 = batch * 4 x 64), and each group is flattened and
/// unravelled on its own: the divisions are then by the group's inner extents (constants here:
/// `bh // 4`, `bh % 4 * 64 + d`) instead of by the symbolic products of the whole shape, which no
/// simplifier undoes (`(s * batch + bh // 4) // batch` for every element of a dynamic BERT's
/// attention reshapes: a scalar kernel with two run-time divisions per element, 6x the static
/// one). Static shapes, and symbolic ones whose products do not match, use one group.
std::vector<Expr> reshapeIndex(const std::vector<Expr>& i, const std::vector<Expr>& outShape,
                               const std::vector<Expr>& inShape) {
  auto whole = [&] { return unravelIndex(flatIndex(i, outShape), inShape); };
  auto symbolic = [](const std::vector<Expr>& sh) {
    return std::any_of(sh.begin(), sh.end(), [](const Expr& e) { return !tir::asConstInt(e); });
  };
  if (!symbolic(outShape) && !symbolic(inShape)) return whole();
  std::vector<Expr> src;
  size_t a = 0, c = 0;
  while (a < inShape.size() || c < outShape.size()) {
    // One group: inShape[a, b) and outShape[c, d) with equal products, the smallest such.
    size_t b = a, d = c;
    DimFactors pin, pout;
    bool closed = false;
    while (!closed) {
      const bool inEmpty = b == a, outEmpty = d == c;
      const bool inLeft = b < inShape.size(), outLeft = d < outShape.size();
      if (!inEmpty && !outEmpty && sameFactors(pin, pout)) {
        closed = true;
        break;
      }
      // Grow the side whose product is the smaller: fewer symbols (a sub-multiset), or the same
      // symbols and the smaller constant. Incomparable products fall back to one group.
      bool growIn;
      if (!inLeft && !outLeft) return whole();
      if (!inLeft) growIn = false;
      else if (!outLeft) growIn = true;
      else if (inEmpty) growIn = true;
      else if (outEmpty) growIn = false;
      else if (symbolsWithin(pin, pout) && (pin.symbols.size() < pout.symbols.size() || pin.constant < pout.constant)) growIn = true;
      else if (symbolsWithin(pout, pin) && (pout.symbols.size() < pin.symbols.size() || pout.constant < pin.constant)) growIn = false;
      else return whole();
      DimFactors& p = growIn ? pin : pout;
      addFactors(growIn ? inShape[b++] : outShape[d++], p);
      std::sort(p.symbols.begin(), p.symbols.end(), arith::ExprLess());
    }
    // Dims of extent 1 at the group's end join it (they index nothing).
    while (b < inShape.size() && tir::isConstInt(inShape[b], 1) && (d == outShape.size() || !tir::isConstInt(outShape[d], 1))) ++b;
    while (d < outShape.size() && tir::isConstInt(outShape[d], 1) && (b == inShape.size() || !tir::isConstInt(inShape[b], 1))) ++d;
    std::vector<Expr> gi(i.begin() + long(c), i.begin() + long(d)), go(outShape.begin() + long(c), outShape.begin() + long(d)),
        gs(inShape.begin() + long(a), inShape.begin() + long(b));
    std::vector<Expr> part = gs.empty() ? std::vector<Expr>{} : unravelIndex(flatIndex(gi, go), gs);
    src.insert(src.end(), part.begin(), part.end());
    a = b;
    c = d;
  }
  return src;
}

/// An index value read from a tensor as int32, negative values counted from `n`, clamped.
Expr indexValue(Expr v, int64_t n) {
  Expr x = tir::cast(DataType::Int(32), v);
  x = tir::select(x < ci(0), x + ci(n), x);
  return clampIndex(x, 0, n - 1);
}

Expr coordOf(const std::string& mode, Expr o, int64_t inLen, int64_t outLen, double givenScale) {
  DataType f = DataType::Float(64);
  double scale = givenScale > 0 ? givenScale : double(outLen) / double(inLen);
  double resized = givenScale > 0 ? double(inLen) * givenScale : double(outLen);
  Expr x = tir::cast(f, o);
  auto c = [&](double v) { return tir::makeConst(f, v); };
  if (mode == "align_corners") return resized == 1 ? c(0) : x * c(double(inLen - 1) / (resized - 1));
  if (mode == "asymmetric") return x / c(scale);
  if (mode == "pytorch_half_pixel") return resized > 1 ? (x + c(0.5)) / c(scale) - c(0.5) : c(0);
  if (mode == "tf_half_pixel_for_nn") return (x + c(0.5)) / c(scale);
  return (x + c(0.5)) / c(scale) - c(0.5);
}

/// coordOf in float32, as ONNX Runtime computes it (upsamplebase.h's GetOriginalCoordinate: the
/// scale a float, out / in or the given one; float arithmetic) except that the division by the
/// scale is a multiplication by its reciprocal (a vector division per output point costs more
/// than the interpolation): within an ulp or two of ORT's coordinate and exact for power-of-2
/// scales (for align_corners the ratio (in - 1) / (resized - 1) as one constant).
Expr coordOf32(const std::string& mode, Expr o, int64_t inLen, int64_t outLen, double givenScale) {
  DataType f = DataType::Float(32);
  const float scale = givenScale > 0 ? float(givenScale) : float(outLen) / float(inLen);
  const double resized = givenScale > 0 ? double(inLen) * givenScale : double(outLen);
  Expr x = tir::cast(f, o);
  auto c = [&](double v) { return tir::makeConst(f, double(float(v))); };
  Expr inv = c(1.0 / double(scale));
  if (mode == "align_corners") return resized == 1 ? c(0) : x * c(double(inLen - 1) / (resized - 1));
  if (mode == "asymmetric") return x * inv;
  if (mode == "pytorch_half_pixel") return resized > 1 ? (x + c(0.5)) * inv - c(0.5) : c(0);
  if (mode == "tf_half_pixel_for_nn") return (x + c(0.5)) * inv;
  return (x + c(0.5)) * inv - c(0.5);
}

/// The two source indices and the weight of the second along one axis of a bilinear float32
/// resize: coordOf32 clamped to [0, n - 1], its floor (truncation: it is not negative) and the
/// next index (clamped), the fraction between them.
struct LinearTaps {
  Expr lo, hi, frac;
};
LinearTaps linearTaps32(const std::string& mode, Expr o, const Expr& n, int64_t inLen, int64_t outLen,
                        double givenScale) {
  DataType f = DataType::Float(32);
  Expr x = coordOf32(mode, std::move(o), inLen, outLen, givenScale);
  const int64_t* v = tir::asConstInt(n);
  Expr hi = v ? tir::makeConst(f, double(*v - 1)) : tir::cast(f, n - ci(1));
  x = tir::min(tir::max(x, tir::makeConst(f, 0)), hi);
  LinearTaps t;
  // Clamped as integers too (no-ops) so that bounds analysis sees indices within the extent.
  t.lo = clampToExtent(tir::cast(DataType::Int(32), x), n);
  t.hi = tir::min(t.lo + ci(1), n - ci(1));
  t.frac = x - tir::cast(f, tir::cast(DataType::Int(32), x));
  return t;
}

Expr roundCoord(const std::string& rounding, Expr x) {
  DataType f = DataType::Float(64);
  Expr r;
  if (rounding == "floor") r = tir::call(f, "floor", {x});
  else if (rounding == "ceil") r = tir::call(f, "ceil", {x});
  else if (rounding == "round_prefer_ceil") r = tir::call(f, "floor", {x + tir::makeConst(f, 0.5)});
  else r = tir::call(f, "ceil", {x - tir::makeConst(f, 0.5)});
  return tir::cast(DataType::Int(32), r);
}

/// layout_transform between NCHW and NCHW{k}c (or OIHW and OIHW{i}i{o}o): the output's physical
/// index -> its logical (a, b, h, w) -> the input's physical index.
Expr layoutTransform(const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
  std::optional<graph::Layout> from = graph::parseLayout(c.attrs.getString("src_layout"));
  std::optional<graph::Layout> to = graph::parseLayout(c.attrs.getString("dst_layout"));
  if (!from || !to || from->kernel != to->kernel)
    LOOM_THROW(UnsupportedError) << graph::callDescription(c) << ": cannot transform layout "
                                 << c.attrs.getString("src_layout") << " to " << c.attrs.getString("dst_layout");
  // Logical index of the output point.
  Expr a = i[0], b = i[1];
  if (!to->isPlain()) {
    if (to->kernel) {
      a = Expr(i[0]) * ci(to->blockB) + i[5];
      b = Expr(i[1]) * ci(to->blockA) + i[4];
    } else {
      b = Expr(i[1]) * ci(to->blockA) + i[4];
    }
  }
  std::vector<Expr> idx{a, b, i[2], i[3]};
  if (!from->isPlain()) {
    if (from->kernel) {
      idx = {tir::floordiv(a, ci(from->blockB)), tir::floordiv(b, ci(from->blockA)), i[2], i[3],
             tir::floormod(b, ci(from->blockA)), tir::floormod(a, ci(from->blockB))};
    } else {
      idx = {a, tir::floordiv(b, ci(from->blockA)), i[2], i[3], tir::floormod(b, ci(from->blockA))};
    }
  }
  return in[0](idx);
}

/// channel_shuffle (OpsLayout.cpp): output channel oc (its padding channels clamped to the last
/// one) is shuffled channel c = begin + oc, which is channel (c % g) * (C / g) + c / g of the
/// inputs concatenated; the input that holds it is selected from the last one backwards.
Expr channelShuffle(const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
  std::optional<graph::Layout> l = graph::parseLayout(c.attrs.getString("layout"));
  const int64_t k = l && !l->isPlain() ? l->blockA : 1;
  const std::vector<int64_t>& channels = c.attrs.getInts("channels");
  const int64_t g = c.attrs.getInt("groups"), begin = c.attrs.getInt("begin"), count = c.attrs.getInt("count");
  int64_t total = 0;
  for (int64_t n : channels) total += n;
  Expr oc = k > 1 ? Expr(i[1]) * ci(k) + i[4] : Expr(i[1]);
  if ((count + k - 1) / k * k != count) oc = tir::min(oc, ci(count - 1));
  Expr ch = begin ? oc + ci(begin) : oc;
  Expr src = g > 1 ? tir::floormod(ch, ci(g)) * ci(total / g) + tir::floordiv(ch, ci(g)) : ch;
  std::vector<int64_t> offsets;
  int64_t off = 0;
  for (int64_t n : channels) {
    offsets.push_back(off);
    off += n;
  }
  Expr r;
  for (size_t x = in.size(); x-- > 0;) {
    Expr local = offsets[x] ? src - ci(offsets[x]) : src;
    if (in.size() > 1) local = clampIndex(local, 0, channels[x] - 1);
    std::vector<Expr> idx = exprs(i);
    if (k > 1) {
      idx[1] = tir::floordiv(local, ci(k));
      idx[4] = tir::floormod(local, ci(k));
    } else {
      idx[1] = local;
    }
    Expr v = in[x](idx);
    r = r.defined() ? tir::select(src < ci(offsets[x] + channels[x]), v, r) : v;
  }
  return r;
}

/// image.resize2d at output point `i` (nearest or bilinear; NCHW or NCHW{k}c, the lane last).
Expr resizePoint(const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
  const std::vector<Expr>& shape = in[0]->shape;
  const std::string& mode = c.attrs.getString("coordinate_transformation_mode");
  const auto& size = c.attrs.getInts("size");
  const auto& scales = c.attrs.getFloats("scales");
  // A symbolic spatial dim: the coordinate transform must not need the lengths (given
  // scales with half_pixel or asymmetric); the clamps use the extents as expressions.
  std::vector<int64_t> is(4, 0);
  for (int d = 2; d < 4; ++d) {
    if (const int64_t* v = tir::asConstInt(shape[size_t(d)])) {
      is[size_t(d)] = *v;
      continue;
    }
    if (scales.empty() || (mode != "half_pixel" && mode != "asymmetric"))
      LOOM_THROW(UnsupportedError) << graph::callDescription(c) << ": resize of a symbolic dim with "
                                   << (scales.empty() ? "sizes" : "mode " + mode)
                                   << " (supported: scales with half_pixel or asymmetric)";
  }
  Expr ih = coordOf(mode, i[2], is[2], size[0], scales.empty() ? 0.0 : scales[0]);
  Expr iw = coordOf(mode, i[3], is[3], size[1], scales.empty() ? 0.0 : scales[1]);
  DataType f = DataType::Float(64);
  DataType t = in[0]->dtype;
  // NCHW, or NCHW{k}c (the "layout" attribute) with the channel lane last.
  auto load = [&](Expr h, Expr w) {
    std::vector<Expr> idx{i[0], i[1], std::move(h), std::move(w)};
    if (i.size() == 5) idx.push_back(i[4]);
    return in[0](idx);
  };
  if (c.attrs.getString("method") == "nearest_neighbor") {
    const std::string& r = c.attrs.getString("rounding_method");
    return load(clampToExtent(roundCoord(r, ih), shape[2]), clampToExtent(roundCoord(r, iw), shape[3]));
  }
  // Bilinear. float32 data: coordinates, weights and the interpolation in float32, as ONNX
  // Runtime computes them (coordOf32, clamped, the floor's fraction as weight); within a few
  // float32 ulps of the float64 transform (coordOf), and where the two floors differ the
  // interpolation is continuous. Other
  // dtypes in float64. A row's coordinate depends on i[2] alone and a column's on i[3]
  // alone, so the row part is loop-invariant under the vectorized column or channel loop.
  Expr h0, h1, w0, w1, fh, fw;
  DataType ft = t == DataType::Float(32) ? t : f;
  if (t == DataType::Float(32)) {
    LinearTaps y = linearTaps32(mode, i[2], shape[2], is[2], size[0], scales.empty() ? 0.0 : scales[0]);
    LinearTaps x = linearTaps32(mode, i[3], shape[3], is[3], size[1], scales.empty() ? 0.0 : scales[1]);
    h0 = y.lo, h1 = y.hi, fh = y.frac, w0 = x.lo, w1 = x.hi, fw = x.frac;
  } else {
    auto clampF = [&](Expr x, const Expr& n) {
      const int64_t* v = tir::asConstInt(n);
      Expr hi = v ? tir::makeConst(f, double(*v - 1)) : tir::cast(f, n - ci(1));
      return tir::min(tir::max(x, tir::makeConst(f, 0)), hi);
    };
    ih = clampF(ih, shape[2]);
    iw = clampF(iw, shape[3]);
    h0 = tir::cast(DataType::Int(32), tir::call(f, "floor", {ih}));
    w0 = tir::cast(DataType::Int(32), tir::call(f, "floor", {iw}));
    h1 = tir::min(h0 + ci(1), shape[2] - ci(1)), w1 = tir::min(w0 + ci(1), shape[3] - ci(1));
    fh = ih - tir::cast(f, h0), fw = iw - tir::cast(f, w0);
  }
  auto at = [&](Expr h, Expr w) { return tir::cast(ft, load(h, w)); };
  Expr one = tir::makeConst(ft, 1);
  Expr v = (at(h0, w0) * (one - fw) + at(h0, w1) * fw) * (one - fh) +
           (at(h1, w0) * (one - fw) + at(h1, w1) * fw) * fh;
  return tir::cast(t, v);
}

/// Bilinear float32 resize with static extents that widens the rows, as two passes (separable
/// interpolation): `rows` interpolates between the two source rows of each output row at the
/// source columns (a reduction over the 2 taps, so the default schedule keeps it a buffer of its
/// own instead of inlining it), the output between the two `rows` columns of each output column.
/// Each output point then reads 2 values, not 4. NCHW data vectorizes along the output row, so
/// those reads are gathers, which cost more than all the arithmetic: the extra pass pays as soon
/// as the rows widen (a 40 -> 61 column resize on one thread: 0.27 -> 0.14-0.17 ms). NCHW{k}c data
/// reads its lanes with vector loads in the model (a 2x upsample feeding an add: the two-pass form
/// 0.10-0.12 ms, one pass 0.07) and gathers only when a layout_transform to NCHW follows (DeepLab's
/// last 16x upsample: 4.0 -> 2.3 ms), so it takes the two passes from 4x wider rows. Nullopt when
/// the one-pass form is used.
std::optional<te::Tensor> separableBilinear(const CallNode& c, const std::vector<te::Tensor>& in,
                                            const std::vector<Expr>& outShape) {
  const te::Tensor& x = in[0];
  if (c.attrs.getString("method") != "linear" || x->dtype != DataType::Float(32)) return std::nullopt;
  const int64_t *H = tir::asConstInt(x->shape[2]), *W = tir::asConstInt(x->shape[3]);
  const int64_t* OW = tir::asConstInt(outShape[3]);
  if (!H || !W || !OW || !tir::asConstInt(outShape[2])) return std::nullopt;
  const bool blocked = x->ndim() == 5;
  if (blocked ? *OW < 4 * *W : *OW <= *W) return std::nullopt;
  const std::string& mode = c.attrs.getString("coordinate_transformation_mode");
  const auto& size = c.attrs.getInts("size");
  const auto& scales = c.attrs.getFloats("scales");
  std::vector<Expr> rowShape = x->shape;
  rowShape[2] = outShape[2];
  te::IterVar tap = te::reduceAxis(ci(2), "tap");
  te::Tensor rows = te::compute(
      rowShape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        LinearTaps y = linearTaps32(mode, i[2], x->shape[2], *H, size[0], scales.empty() ? 0.0 : scales[0]);
        std::vector<Expr> idx = exprs(i);
        idx[2] = tir::select(tir::eq(Expr(tap), ci(0)), y.lo, y.hi);
        Expr w = tir::select(tir::eq(Expr(tap), ci(0)), tir::makeConst(x->dtype, 1) - y.frac, y.frac);
        return te::sum(x(idx) * w, {tap});
      },
      "T_resize2d_rows", "resize");
  return te::compute(
      outShape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        LinearTaps t = linearTaps32(mode, i[3], x->shape[3], *W, size[1], scales.empty() ? 0.0 : scales[1]);
        std::vector<Expr> lo = exprs(i), hi = exprs(i);
        lo[3] = t.lo;
        hi[3] = t.hi;
        return rows(lo) * (tir::makeConst(x->dtype, 1) - t.frac) + rows(hi) * t.frac;
      },
      "T_resize2d", "injective");
}
}  // namespace

Expr resizeCoordinate(const std::string& mode, Expr o, int64_t inLen, int64_t outLen, double givenScale) {
  return coordOf(mode, std::move(o), inLen, outLen, givenScale);
}

void registerTransformComputes() {
  setCompute("reshape", [](const CallNode& call, const std::vector<te::Tensor>& in, const graph::Type& outType) {
    std::vector<Expr> os = teShape(staticTensor(outType, call));
    return one(te::compute(
        os,
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          return in[0](reshapeIndex(exprs(i), os, in[0]->shape));
        },
        "T_reshape", "injective"));
  });
  setSimple(
      "transpose",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        std::vector<int64_t> axes = c.attrs.getInts("axes");
        size_t n = i.size();
        if (axes.empty())
          for (size_t d = 0; d < n; ++d) axes.push_back(int64_t(n - 1 - d));
        std::vector<Expr> idx(n);
        for (size_t d = 0; d < n; ++d) idx[size_t(normAxis(axes[d], int64_t(n)))] = i[d];
        return in[0](idx);
      },
      "injective");
  setSimple("layout_transform", layoutTransform, "injective");
  setSimple("channel_shuffle", channelShuffle, "injective");
  setSimple(
      "concatenate",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        int64_t axis = normAxis(c.attrs.getInt("axis"), int64_t(i.size()));
        // From the last input backwards: select the input whose range holds the index. The
        // offsets are expressions: a symbolic concatenated dim (a dynamic width) works too.
        std::vector<Expr> offsets;
        Expr off = ci(0);
        for (const te::Tensor& t : in) {
          offsets.push_back(off);
          off = tir::isZero(off) ? t->shape[size_t(axis)] : off + t->shape[size_t(axis)];
        }
        Expr r;
        for (size_t k = in.size(); k-- > 0;) {
          const Expr& n = in[k]->shape[size_t(axis)];
          if (tir::isConstInt(n, 0)) continue;
          std::vector<Expr> idx = exprs(i);
          idx[size_t(axis)] = clampToExtent(Expr(i[size_t(axis)]) - offsets[k], n);
          Expr v = in[k](idx);
          // Along an outer axis the choice is the same for a whole row of vector lanes: a lazy
          // if_then_else reads only the input that holds the point (a select reads every input,
          // so a concat of DenseNet's 20 inputs fused into the next layer's batch norm did 20
          // loads per element).
          if (r.defined())
            r = size_t(axis) + 1 < i.size() ? tir::ifThenElse(Expr(i[size_t(axis)]) < offsets[k] + n, v, r)
                                            : tir::select(Expr(i[size_t(axis)]) < offsets[k] + n, v, r);
          else
            r = v;
        }
        return r;
      },
      "injective");
  setCompute("split", [](const CallNode& call, const std::vector<te::Tensor>& in, const graph::Type& outType) {
    const auto* tt = outType.as<graph::TupleTypeNode>();
    LOOM_ICHECK(tt) << "split's type is not a tuple";
    int64_t axis = normAxis(call.attrs.getInt("axis"), int64_t(in[0]->ndim()));
    std::vector<te::Tensor> outs;
    int64_t off = 0;
    for (size_t k = 0; k < tt->fields.size(); ++k) {
      const graph::TensorTypeNode& f = staticTensor(graph::Type(tt->fields[k]), call);
      int64_t start = off;
      outs.push_back(te::compute(
          teShape(f),
          [&](const std::vector<Var>& i) -> te::ComputeBody {
            std::vector<Expr> idx = exprs(i);
            idx[size_t(axis)] = Expr(i[size_t(axis)]) + ci(start);
            return in[0](idx);
          },
          "T_split" + std::to_string(k), "injective"));
      off += f.staticShape()[size_t(axis)];
    }
    return outs;
  });
  setSimple(
      "strided_slice",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        std::vector<int64_t> shape = extentsOrSymbolic(in[0]);
        const auto& b = c.attrs.getInts("begin");
        const auto& s = c.attrs.getInts("strides");
        std::vector<int64_t> axes = c.attrs.getInts("axes");
        if (axes.empty())
          for (size_t k = 0; k < b.size(); ++k) axes.push_back(int64_t(k));
        std::vector<Expr> idx = exprs(i);
        for (size_t k = 0; k < axes.size(); ++k) {
          size_t a = size_t(normAxis(axes[k], int64_t(shape.size())));
          int64_t n = shape[a], st = s.empty() ? 1 : s[k], lo = b[k];
          if (n < 0) {
            // A symbolic axis: the same clamping with the extent as an expression.
            Expr ne = in[0]->shape[a];
            Expr l = lo < 0 ? ne + ci(lo) : ci(lo);
            l = st > 0 ? tir::min(tir::max(l, ci(0)), ne) : tir::min(tir::max(l, ci(-1)), ne - ci(1));
            idx[a] = clampToExtent(l + Expr(i[a]) * ci(st), ne);
            continue;
          }
          if (lo < 0) lo += n;
          lo = st > 0 ? std::clamp<int64_t>(lo, 0, n) : std::clamp<int64_t>(lo, -1, n - 1);
          idx[a] = clampIndex(ci(lo) + Expr(i[a]) * ci(st), 0, n - 1);
        }
        return in[0](idx);
      },
      "injective");
  setSimple(
      "take",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        size_t nd = in[0]->ndim(), ni = in[1]->ndim();
        size_t axis = size_t(normAxis(c.attrs.getInt("axis"), int64_t(nd)));
        std::vector<Expr> ii(i.begin() + long(axis), i.begin() + long(axis + ni));
        std::vector<Expr> idx(i.begin(), i.begin() + long(axis));
        if (const int64_t* n = tir::asConstInt(in[0]->shape[axis])) {
          idx.push_back(indexValue(in[1](ii), *n));
        } else {
          // Gathering along a symbolic axis: negative indices count from its extent.
          const Expr& ne = in[0]->shape[axis];
          Expr x = tir::cast(DataType::Int(32), in[1](ii));
          x = tir::select(x < ci(0), x + ne, x);
          idx.push_back(clampToExtent(x, ne));
        }
        for (size_t d = axis + ni; d < i.size(); ++d) idx.push_back(i[d]);
        return in[0](idx);
      },
      "injective");
  setSimple(
      "broadcast_to",
      [](const CallNode&, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        return broadcastLoad(in[0], i);
      },
      "broadcast");
  setSimple(
      "tile",
      [](const CallNode&, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        std::vector<int64_t> shape = extents(in[0]);
        size_t off = i.size() - shape.size();
        std::vector<Expr> idx;
        for (size_t d = 0; d < shape.size(); ++d)
          idx.push_back(shape[d] == 1 ? ci(0) : tir::floormod(i[d + off], ci(shape[d])));
        return in[0](idx);
      },
      "injective");
  setSimple(
      "nn.pad",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        // A symbolic dim (a dynamic batch) passes through when it is not padded; the padded
        // dims (a channel block's padding channels, an image's border) must be static.
        std::vector<int64_t> shape = extentsOrSymbolic(in[0]);
        const auto& pw = c.attrs.getInts("pad_width");
        const std::string& mode = c.attrs.getString("pad_mode");
        std::vector<Expr> idx;
        Expr inside = tir::boolImm(true);
        for (size_t d = 0; d < shape.size(); ++d) {
          int64_t before = pw.size() > 2 * d ? pw[2 * d] : 0, n = shape[d];
          if (n < 0) {
            if (before != 0 || (pw.size() > 2 * d + 1 && pw[2 * d + 1] != 0))
              LOOM_THROW(UnsupportedError) << graph::callDescription(c) << ": dim " << d << " of its operand '"
                                           << in[0]->name << "' is symbolic and padded; give static shapes with --input-shapes";
            idx.push_back(i[d]);
            continue;
          }
          Expr x = Expr(i[d]) - ci(before);
          if (mode == "reflect" && n > 1) {
            // Reflect about the ends (period 2n - 2) without repeating the edge.
            Expr p = tir::floormod(x, ci(2 * n - 2));
            x = tir::select(p < ci(n), p, ci(2 * n - 2) - p);
          } else if (mode == "constant" && before != 0) {
            inside = inside && x >= ci(0) && x < ci(n);
          } else if (mode == "constant" && pw.size() > 2 * d + 1 && pw[2 * d + 1] != 0) {
            inside = inside && x < ci(n);
          }
          idx.push_back(clampIndex(x, 0, n - 1));
        }
        Expr v = in[0](idx);
        if (mode != "constant") return v;
        return tir::select(inside, v, tir::makeConst(v.dtype(), c.attrs.getFloat("pad_value")));
      },
      "injective");
  setSimple(
      "gather_elements",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        std::vector<int64_t> shape = extents(in[0]);
        size_t axis = size_t(normAxis(c.attrs.getInt("axis"), int64_t(shape.size())));
        std::vector<Expr> idx = exprs(i);
        idx[axis] = indexValue(in[1](exprs(i)), shape[axis]);
        return in[0](idx);
      },
      "injective");
  setSimple(
      "nn.depth_to_space",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        // NCHW, or NCHW{k}c (the "layout" attribute, the channel lane last): a DCR block of
        // C channels, C a multiple of k, keeps the lane (channel % k) and copies whole vectors.
        std::optional<graph::Layout> l = graph::parseLayout(c.attrs.getString("layout"));
        const int64_t k = l && !l->isPlain() ? l->blockA : 1;
        const std::vector<int64_t> s = extents(in[0]);
        int64_t b = c.attrs.getInt("block_size"), C = s[1] * (k > 1 ? s[4] : 1) / (b * b);
        Expr bh = tir::floormod(i[2], ci(b)), bw = tir::floormod(i[3], ci(b));
        Expr oc = k > 1 ? Expr(i[1]) * ci(k) + i[4] : Expr(i[1]);
        Expr ch = c.attrs.getString("mode") == "CRD" ? oc * ci(b * b) + bh * ci(b) + bw : (bh * ci(b) + bw) * ci(C) + oc;
        if (k > 1 && c.attrs.getString("mode") != "CRD" && C % k == 0)
          return in[0](i[0], (bh * ci(b) + bw) * ci(C / k) + i[1], tir::floordiv(i[2], ci(b)), tir::floordiv(i[3], ci(b)), i[4]);
        if (k > 1)
          return in[0](i[0], tir::floordiv(ch, ci(k)), tir::floordiv(i[2], ci(b)), tir::floordiv(i[3], ci(b)), tir::floormod(ch, ci(k)));
        return in[0](i[0], ch, tir::floordiv(i[2], ci(b)), tir::floordiv(i[3], ci(b)));
      },
      "injective");
  setSimple(
      "nn.space_to_depth",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        int64_t b = c.attrs.getInt("block_size"), C = extents(in[0])[1];
        Expr o = tir::floordiv(i[1], ci(C));
        return in[0](i[0], tir::floormod(i[1], ci(C)), Expr(i[2]) * ci(b) + tir::floordiv(o, ci(b)),
                     Expr(i[3]) * ci(b) + tir::floormod(o, ci(b)));
      },
      "injective");
  setCompute("image.resize2d", [](const CallNode& c, const std::vector<te::Tensor>& in, const graph::Type& outType) {
    std::vector<Expr> shape = teShape(staticTensor(outType, c));
    if (std::optional<te::Tensor> t = separableBilinear(c, in, shape)) return one(*t);
    return one(te::compute(
        shape, [&](const std::vector<Var>& i) -> te::ComputeBody { return resizePoint(c, in, i); }, "T_resize2d",
        "injective"));
  });
  setSimple(
      "arange",
      [](const CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        DataType t = in[0]->dtype;
        return in[0](std::vector<Expr>{}) + tir::cast(t, i[0]) * tir::makeConst(t, c.attrs.getFloat("step"));
      },
      "injective");
  setSimple(
      "shape_of",
      [](const CallNode&, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        // Symbolic dims (an input's or a data-dependent count) as their int32 expressions.
        const std::vector<Expr>& s = in[0]->shape;
        Expr r = tir::intImm(DataType::Int(64), 0);
        for (size_t d = 0; d < s.size(); ++d)
          r = tir::select(tir::eq(i[0], ci(int64_t(d))), extentValue(DataType::Int(64), s[d]), r);
        return r;
      },
      "injective");
  setCompute("cumsum", [](const CallNode& call, const std::vector<te::Tensor>& in, const graph::Type& outType) {
    std::vector<int64_t> s = extents(in[0]);
    size_t axis = size_t(normAxis(call.attrs.getInt("axis"), int64_t(s.size())));
    bool exclusive = call.attrs.getInt("exclusive") != 0, reverse = call.attrs.getInt("reverse") != 0;
    te::IterVar k = te::reduceAxis(ci(s[axis]), "k");
    return one(te::compute(
        teShape(staticTensor(outType, call)),
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          std::vector<Expr> idx = exprs(i);
          idx[axis] = k;
          Expr ia = i[axis];
          Expr cond = reverse ? (exclusive ? Expr(k) > ia : Expr(k) >= ia) : (exclusive ? Expr(k) < ia : Expr(k) <= ia);
          return te::sum(in[0](idx), {k}, cond);
        },
        "T_cumsum", "cumsum"));
  });
}

}  // namespace loom::topi::nn
