// TE compute of image.resize2d_cubic: 4x4 taps per output point with the cubic kernel's weights
// computed from the fraction of the source coordinate.
#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

void registerImageComputes() {
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
