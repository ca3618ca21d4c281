// TE computes of image.resize2d_cubic (4x4 taps per output point, the cubic kernel's weights
// computed from the fraction of the source coordinate) and image.grid_sample.
#include "core/te/Reduce.h"
#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

namespace {

/// ONNX's cubic kernel (coefficient A) for the 4 taps at fraction t.
void cubicTaps(Expr t, double A, Expr w[4]) {
  DataType f = DataType::Float(64);
  auto k = [&](double v) { return tir::makeConst(f, v); };
  auto nearW = [&](Expr d) { return ((k(A + 2) * d - k(A + 3)) * d * d) + k(1); };
  auto farW = [&](Expr d) { return ((k(A) * d - k(5 * A)) * d + k(8 * A)) * d - k(4 * A); };
  w[0] = farW(k(1) + t);
  w[1] = nearW(t);
  w[2] = nearW(k(1) - t);
  w[3] = farW(k(2) - t);
}

/// x reflected into [lo, hi] (GridSample's reflection padding), in float64.
Expr reflect(Expr x, double lo, double hi) {
  DataType f = DataType::Float(64);
  auto k = [&](double v) { return tir::makeConst(f, v); };
  double range = hi - lo;
  Expr below = x < k(lo);
  Expr dx = tir::select(below, k(lo) - x, x - k(hi));
  Expr n = tir::call(f, "floor", {dx / k(range)});
  Expr r = dx - n * k(range);
  Expr even = tir::eq(n - k(2) * tir::call(f, "floor", {n / k(2)}), k(0));
  Expr out = tir::select(below, tir::select(even, k(lo) + r, k(hi) - r), tir::select(even, k(hi) - r, k(lo) + r));
  return tir::select(x >= k(lo) && x <= k(hi), x, out);
}

Expr gridSample(const graph::CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
  std::vector<int64_t> xs = extents(in[0]);
  const int64_t H = xs[2], W = xs[3];
  const std::string &mode = c.attrs.getString("mode"), &pad = c.attrs.getString("padding_mode");
  const bool ac = c.attrs.getInt("align_corners") != 0;
  DataType f = DataType::Float(64);
  auto k = [&](double v) { return tir::makeConst(f, v); };
  auto unnorm = [&](Expr g, int64_t n) {
    g = tir::cast(f, g);
    return ac ? (g + k(1)) / k(2) * k(double(n - 1)) : ((g + k(1)) * k(double(n)) - k(1)) / k(2);
  };
  const double loX = ac ? 0.0 : -0.5, hiX = ac ? double(W - 1) : double(W) - 0.5;
  const double loY = ac ? 0.0 : -0.5, hiY = ac ? double(H - 1) : double(H) - 0.5;
  Expr fx = unnorm(in[1](i[0], i[2], i[3], ci(0)), W), fy = unnorm(in[1](i[0], i[2], i[3], ci(1)), H);
  if (pad == "border") {
    fx = tir::min(tir::max(fx, k(0)), k(double(W - 1)));
    fy = tir::min(tir::max(fy, k(0)), k(double(H - 1)));
  } else if (pad == "reflection") {
    fx = reflect(fx, loX, hiX);
    fy = reflect(fy, loY, hiY);
  }
  // The pixel at integer (iy, ix) under the padding mode (zeros: 0 outside).
  auto pixel = [&](Expr iy, Expr ix) {
    Expr inside;
    if (pad == "zeros") inside = ix >= ci(0) && ix < ci(W) && iy >= ci(0) && iy < ci(H);
    if (pad == "reflection") {
      ix = tir::cast(DataType::Int(32), reflect(tir::cast(f, ix), loX, hiX));
      iy = tir::cast(DataType::Int(32), reflect(tir::cast(f, iy), loY, hiY));
    }
    Expr v = tir::cast(f, in[0](i[0], i[1], clampIndex(iy, 0, H - 1), clampIndex(ix, 0, W - 1)));
    return inside.defined() ? tir::select(inside, v, k(0)) : v;
  };
  auto toInt = [](Expr v) { return tir::cast(DataType::Int(32), v); };
  if (mode == "nearest") return pixel(toInt(tir::call(f, "round", {fy})), toInt(tir::call(f, "round", {fx})));
  Expr flx = tir::call(f, "floor", {fx}), fly = tir::call(f, "floor", {fy});
  Expr x0 = toInt(flx), y0 = toInt(fly), tx = fx - flx, ty = fy - fly;
  if (mode == "bilinear")
    return (pixel(y0, x0) * (k(1) - tx) + pixel(y0, x0 + ci(1)) * tx) * (k(1) - ty) +
           (pixel(y0 + ci(1), x0) * (k(1) - tx) + pixel(y0 + ci(1), x0 + ci(1)) * tx) * ty;
  Expr wx[4], wy[4];
  cubicTaps(tx, -0.75, wx);
  cubicTaps(ty, -0.75, wy);
  Expr v;
  for (int a = 0; a < 4; ++a) {
    Expr row;
    for (int b = 0; b < 4; ++b) {
      Expr e = wx[b] * pixel(y0 + ci(a - 1), x0 + ci(b - 1));
      row = row.defined() ? row + e : e;
    }
    v = v.defined() ? v + wy[a] * row : wy[a] * row;
  }
  return v;
}

}  // namespace

void registerImageComputes() {
  setCompute("nn.max_pool2d_indices", [](const graph::CallNode& c, const std::vector<te::Tensor>& in, const graph::Type& outType) {
    std::vector<int64_t> xs = extents(in[0]);
    const int64_t H = xs[2], W = xs[3];
    const auto &k = c.attrs.getInts("pool_size"), &st = c.attrs.getInts("strides"), &p = c.attrs.getInts("padding"),
               &dl = c.attrs.getInts("dilation");
    const bool colMajor = c.attrs.getInt("storage_order") != 0;
    std::vector<Expr> shape = teShape(staticTensor(outType, c));
    auto window = [&](const std::vector<Var>& i, Expr a, Expr b, Expr& h, Expr& w) {
      h = Expr(i[2]) * ci(st[0]) - ci(p[0]) + a * ci(dl[0]);
      w = Expr(i[3]) * ci(st[1]) - ci(p[1]) + b * ci(dl[1]);
      return h >= ci(0) && h < ci(H) && w >= ci(0) && w < ci(W);
    };
    te::IterVar a = te::reduceAxis(ci(k[0]), "a"), b = te::reduceAxis(ci(k[1]), "b");
    te::Tensor best = te::compute(
        shape,
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr h, w;
          Expr inside = window(i, a, b, h, w);
          return te::max(in[0](i[0], i[1], clampIndex(h, 0, H - 1), clampIndex(w, 0, W - 1)), {a, b}, inside);
        },
        "T_pool_max", "pool");
    te::IterVar a2 = te::reduceAxis(ci(k[0]), "a"), b2 = te::reduceAxis(ci(k[1]), "b");
    te::Tensor first = te::compute(
        shape,
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr h, w;
          Expr inside = window(i, a2, b2, h, w);
          Expr hc = clampIndex(h, 0, H - 1), wc = clampIndex(w, 0, W - 1);
          Expr hit = inside && tir::eq(in[0](i[0], i[1], hc, wc), best(exprs(i)));
          // The first maximum in window order (a, b): the smallest window position.
          return te::min(Expr(a2) * ci(k[1]) + Expr(b2), {a2, b2}, hit);
        },
        "T_pool_first", "pool");
    return std::vector<te::Tensor>{te::compute(
        shape,
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr pos = first(exprs(i));
          Expr h = Expr(i[2]) * ci(st[0]) - ci(p[0]) + tir::floordiv(pos, ci(k[1])) * ci(dl[0]);
          Expr w = Expr(i[3]) * ci(st[1]) - ci(p[1]) + tir::floormod(pos, ci(k[1])) * ci(dl[1]);
          Expr plane = (Expr(i[0]) * ci(xs[1]) + i[1]) * ci(H * W);
          Expr flat = plane + (colMajor ? w * ci(H) + h : h * ci(W) + w);
          return tir::cast(DataType::Int(64), flat);
        },
        "T_pool_indices", "pool")};
  });
  setCompute("image.roi_align", [](const graph::CallNode& c, const std::vector<te::Tensor>& in, const graph::Type& outType) {
    std::vector<int64_t> xs = extents(in[0]);
    const int64_t N = xs[0], H = xs[2], W = xs[3], S = c.attrs.getInt("sampling_ratio");
    const int64_t OH = c.attrs.getInt("output_height"), OW = c.attrs.getInt("output_width");
    const double scale = c.attrs.getFloat("spatial_scale");
    const bool half = c.attrs.getString("coordinate_transformation_mode") == "half_pixel";
    const bool isMax = c.attrs.getString("mode") == "max";
    DataType f = DataType::Float(64);
    auto k = [&](double v) { return tir::makeConst(f, v); };
    te::IterVar iy = te::reduceAxis(ci(S), "iy"), ix = te::reduceAxis(ci(S), "ix");
    te::Tensor acc = te::compute(
        teShape(staticTensor(outType, c)),
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr q = i[0];
          auto roi = [&](int j) { return tir::cast(f, in[1](q, ci(j))) * k(scale) - k(half ? 0.5 : 0.0); };
          Expr sw = roi(0), sh = roi(1), rw = roi(2) - sw, rh = roi(3) - sh;
          if (!half) rw = tir::max(rw, k(1)), rh = tir::max(rh, k(1));
          Expr bw = rw / k(double(OW)), bh = rh / k(double(OH));
          Expr b = clampIndex(tir::cast(DataType::Int(32), in[2](q)), 0, N - 1);
          Expr y = sh + tir::cast(f, i[2]) * bh + (tir::cast(f, Expr(iy)) + k(0.5)) * bh / k(double(S));
          Expr x = sw + tir::cast(f, i[3]) * bw + (tir::cast(f, Expr(ix)) + k(0.5)) * bw / k(double(S));
          Expr valid = !(y < k(-1) || y > k(double(H)) || x < k(-1) || x > k(double(W)));
          y = tir::max(y, k(0));
          x = tir::max(x, k(0));
          auto axis = [&](Expr v, int64_t n, Expr& lo, Expr& hi, Expr& frac) {
            Expr v0 = tir::cast(DataType::Int(32), v);
            Expr edge = v0 >= ci(n - 1);
            lo = tir::select(edge, ci(n - 1), v0);
            hi = tir::select(edge, ci(n - 1), v0 + ci(1));
            frac = tir::select(edge, k(0), v - tir::cast(f, v0));
            lo = clampIndex(lo, 0, n - 1);
            hi = clampIndex(hi, 0, n - 1);
          };
          Expr y0, y1, ly, x0, x1, lx;
          axis(y, H, y0, y1, ly);
          axis(x, W, x0, x1, lx);
          auto at = [&](Expr yy, Expr xx) { return tir::cast(f, in[0](b, i[1], yy, xx)); };
          Expr t0 = (k(1) - ly) * (k(1) - lx) * at(y0, x0), t1 = (k(1) - ly) * lx * at(y0, x1);
          Expr t2 = ly * (k(1) - lx) * at(y1, x0), t3 = ly * lx * at(y1, x1);
          if (isMax) return te::max(tir::select(valid, tir::max(tir::max(t0, t1), tir::max(t2, t3)), k(0)), {iy, ix});
          return te::sum(tir::select(valid, t0 + t1 + t2 + t3, k(0)), {iy, ix});
        },
        "T_roi_align_acc", "roi_align");
    return std::vector<te::Tensor>{te::compute(
        acc->shape,
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr v = acc(exprs(i));
          if (!isMax) v = v / k(double(S * S));
          return tir::cast(in[0]->dtype, v);
        },
        "T_roi_align", "roi_align")};
  });
  setSimple(
      "image.grid_sample",
      [](const graph::CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        return tir::cast(in[0]->dtype, gridSample(c, in, i));
      },
      "injective");
  setSimple(
      "image.resize2d_cubic",
      [](const graph::CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        std::vector<int64_t> is = extents(in[0]);
        const std::string& mode = c.attrs.getString("coordinate_transformation_mode");
        const auto& size = c.attrs.getInts("size");
        const auto& scales = c.attrs.getFloats("scales");
        const double A = c.attrs.getFloat("cubic_coeff_a");
        const bool exclude = c.attrs.getInt("exclude_outside") != 0;
        DataType f = DataType::Float(64);
        auto k = [&](double v) { return tir::makeConst(f, v); };
        struct Taps {
          Expr idx[4], w[4];
        };
        auto taps = [&](Var o, int axis) {
          int64_t n = is[size_t(2 + axis)];
          Expr x = resizeCoordinate(mode, o, n, size[size_t(axis)], scales.empty() ? 0.0 : scales[size_t(axis)]);
          Expr fl = tir::call(f, "floor", {x});
          Expr t = x - fl;
          Expr base = tir::cast(DataType::Int(32), fl);
          auto nearW = [&](Expr d) { return ((k(A + 2) * d - k(A + 3)) * d * d) + k(1); };
          auto farW = [&](Expr d) { return ((k(A) * d - k(5 * A)) * d + k(8 * A)) * d - k(4 * A); };
          Taps r;
          r.w[0] = farW(k(1) + t);
          r.w[1] = nearW(t);
          r.w[2] = nearW(k(1) - t);
          r.w[3] = farW(k(2) - t);
          Expr sum;
          for (int j = 0; j < 4; ++j) {
            Expr raw = base + ci(j - 1);
            if (exclude) {
              r.w[j] = tir::select(raw >= ci(0) && raw < ci(n), r.w[j], k(0));
              sum = sum.defined() ? sum + r.w[j] : r.w[j];
            }
            r.idx[j] = clampIndex(raw, 0, n - 1);
          }
          if (exclude)
            for (int j = 0; j < 4; ++j) r.w[j] = r.w[j] / sum;
          return r;
        };
        Taps h = taps(i[2], 0), w = taps(i[3], 1);
        Expr v;
        for (int a = 0; a < 4; ++a) {
          Expr row;
          for (int b = 0; b < 4; ++b) {
            Expr e = w.w[b] * tir::cast(f, in[0](i[0], i[1], h.idx[a], w.idx[b]));
            row = row.defined() ? row + e : e;
          }
          v = v.defined() ? v + h.w[a] * row : h.w[a] * row;
        }
        return tir::cast(in[0]->dtype, v);
      },
      "injective");
}

}  // namespace loom::topi::nn
