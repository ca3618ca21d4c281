// TE computes of the neural-network graph ops: conv2d, conv2d_transpose, dense, matmul, pools,
// batch/layer/instance norm, softmax and log_softmax.
#include <limits>
#include <optional>

#include "core/graph/Layout.h"
#include "core/topi/Ops.h"
#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

namespace {

using graph::CallNode;
using graph::Type;

std::vector<te::Tensor> one(te::Tensor t) { return {std::move(t)}; }

/// The channel block of a data layout "NCHW{k}c" (0 for NCHW, -1 for anything else).
int64_t dataBlock(const std::string& layout) {
  std::optional<graph::Layout> l = graph::parseLayout(layout);
  if (!l || l->kernel) return -1;
  return l->blockA;
}

/// Depthwise conv2d of channel-blocked data [N, C/k, H, W, k] with a kernel [C/k, 1, KH, KW, 1, k]
/// to [N, C/k, OH, OW, k]: each channel lane reads its own input lane.
std::vector<te::Tensor> depthwiseConv2dNCHWc(const CallNode& call, const std::vector<te::Tensor>& in,
                                             const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  std::vector<int64_t> ws = extents(in[1]);
  te::Tensor data = topi::pad(in[0], {0, 0, p[0], p[1], 0}, {0, 0, p[2], p[3], 0}, 0.0, "pad_temp");
  te::IterVar ry = te::reduceAxis(ci(ws[2]), "ry"), rx = te::reduceAxis(ci(ws[3]), "rx");
  const te::Tensor& W = in[1];
  return one(te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr y = Expr(i[2]) * ci(s[0]) + Expr(ry) * ci(dl[0]);
        Expr x = Expr(i[3]) * ci(s[1]) + Expr(rx) * ci(dl[1]);
        return te::sum(data(i[0], i[1], y, x, i[4]) * W(i[1], ci(0), ry, rx, ci(0), i[4]), {ry, rx});
      },
      "depthwise_conv2d_NCHWc", "depthwise_conv2d_NCHWc"));
}

/// conv2d of channel-blocked data [N, C/ib, H, W, ib] with a kernel [O/ob, C/groups/ib, KH, KW, ib, ob]
/// to [N, O/ob, OH, OW, ob], as TVM's conv2d_NCHWc. The reduction over the input channels is two
/// axes, the block (rco) and the lane within it (rci), around the kernel window: (rco, ry, rx,
/// rci), so a schedule can keep a tile of outputs while it walks one input block. A grouped conv
/// (groups whose input and output channels are whole blocks) reads the input blocks of the output
/// block's group.
std::vector<te::Tensor> conv2dNCHWc(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  std::optional<graph::Layout> kl = graph::parseLayout(call.attrs.getString("kernel_layout"));
  int64_t groups = call.attrs.getInt("groups");
  if (groups != 1 && kl && in[0]->ndim() == 5 && in[1]->ndim() == 6 && kl->blockA == 1)
    return depthwiseConv2dNCHWc(call, in, outType);
  if (!kl || !kl->kernel || in[0]->ndim() != 5 || in[1]->ndim() != 6)
    LOOM_THROW(UnsupportedError) << graph::callDescription(call) << ": unsupported conv2d layouts "
                                 << call.attrs.getString("data_layout") << " / "
                                 << call.attrs.getString("kernel_layout");
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  std::vector<int64_t> ws = extents(in[1]);
  te::Tensor data = topi::pad(in[0], {0, 0, p[0], p[1], 0}, {0, 0, p[2], p[3], 0}, 0.0, "pad_temp");
  te::IterVar rco = te::reduceAxis(ci(ws[1]), "rco"), ry = te::reduceAxis(ci(ws[2]), "ry"),
              rx = te::reduceAxis(ci(ws[3]), "rx"), rci = te::reduceAxis(ci(ws[4]), "rci");
  const te::Tensor& W = in[1];
  return one(te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr y = Expr(i[2]) * ci(s[0]) + Expr(ry) * ci(dl[0]);
        Expr x = Expr(i[3]) * ci(s[1]) + Expr(rx) * ci(dl[1]);
        // The input block: of the output block's group when grouped.
        Expr cb = rco;
        if (groups != 1) {
          const int64_t outBlocksPerGroup = ws[0] / groups;
          Expr g = outBlocksPerGroup == 1 ? Expr(i[1]) : tir::floordiv(i[1], ci(outBlocksPerGroup));
          cb = g * ci(ws[1]) + rco;
        }
        return te::sum(data(i[0], cb, y, x, rci) * W(i[1], rco, ry, rx, rci, i[4]), {rco, ry, rx, rci});
      },
      "conv2d_NCHWc", "conv2d_NCHWc"));
}

std::vector<te::Tensor> conv2d(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  if (dataBlock(call.attrs.getString("data_layout")) > 0) return conv2dNCHWc(call, in, outType);
  if (call.attrs.getString("data_layout") != "NCHW" || call.attrs.getString("kernel_layout") != "OIHW")
    LOOM_THROW(UnsupportedError) << graph::callDescription(call) << ": only NCHW/OIHW and NCHW{k}c/OIHW{i}i{o}o conv2d are lowered";
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  int64_t g = call.attrs.getInt("groups");
  std::vector<int64_t> ws = extents(in[1]);
  int64_t O = ws[0], CI = ws[1], opg = O / g;
  te::Tensor data = topi::pad(in[0], {0, 0, p[0], p[1]}, {0, 0, p[2], p[3]}, 0.0, "pad_temp");
  te::IterVar rc = te::reduceAxis(ci(CI), "rc"), ry = te::reduceAxis(ci(ws[2]), "ry"),
              rx = te::reduceAxis(ci(ws[3]), "rx");
  const te::Tensor& W = in[1];
  return one(te::compute(
      teShape(out),
      [&](Var n, Var o, Var y, Var x) -> te::ComputeBody {
        Expr c = g == 1 ? Expr(rc) : tir::floordiv(o, ci(opg)) * ci(CI) + rc;
        return te::sum(data(n, c, Expr(y) * ci(s[0]) + Expr(ry) * ci(dl[0]), Expr(x) * ci(s[1]) + Expr(rx) * ci(dl[1])) *
                           W(o, rc, ry, rx),
                       {rc, ry, rx});
      },
      "conv2d_nchw", "conv2d_nchw"));
}

/// The kernel taps that reach output position y of a stride-s transposed conv along one axis (no
/// dilation), by phase: tap t of [0, ceil(k / s)) is kernel position r = (y + p) % s + t * s,
/// reading input position (y + p) / s - t. Every tap is valid when r < k and the input position
/// is inside [0, n) for every output position of [0, outLen) (checked here, at compile time).
struct PhaseAxis {
  int64_t taps = 1;
  bool alwaysValid = true;
};
PhaseAxis phaseAxis(int64_t k, int64_t s, int64_t p, int64_t n, int64_t outLen) {
  PhaseAxis a;
  a.taps = (k + s - 1) / s;
  for (int64_t y = 0; y < outLen && a.alwaysValid; ++y)
    for (int64_t t = 0; t < a.taps; ++t) {
      const int64_t r = (y + p) % s + t * s, i = (y + p) / s - t;
      if (r >= k || i < 0 || i >= n) {
        a.alwaysValid = false;
        break;
      }
    }
  return a;
}

/// The col buffer of the GEMM form (conv2dTranspose) at most: beyond it, the phased sum without a
/// col buffer.
constexpr int64_t kMaxColBytes = int64_t(64) << 20;

/// conv2d_transpose without dilation, by output phase (conv2dTranspose): the tap index t runs over
/// ceil(k / s) positions per axis, none of them a zero of the stride. With at least 4 input
/// channels per group, as ONNX Runtime does it: a GEMM into a col buffer
/// col[n, ry, rx, o, iy, ix] = sum_c data[n, c, iy, ix] * w[c, o, ry, rx] (its lane axis the input
/// columns, its register-tile rows the output channels: the default schedule's lane tile), then
/// each output gathers its taps of col (col2im), the epilogue fused into that gather.
std::vector<te::Tensor> conv2dTransposePhased(const CallNode& call, const std::vector<te::Tensor>& in,
                                              const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  int64_t g = call.attrs.getInt("groups");
  std::vector<int64_t> ds = extents(in[0]), ws = extents(in[1]);
  const std::vector<int64_t> os = out.staticShape();
  const int64_t N = ds[0], C = ds[1], H = ds[2], W = ds[3], opg = ws[1], KH = ws[2], KW = ws[3];
  const int64_t cpg = C / g, O = opg * g;
  const PhaseAxis ay = phaseAxis(KH, s[0], p[0], H, os[2]), ax = phaseAxis(KW, s[1], p[1], W, os[3]);
  const te::Tensor &D = in[0], &Wt = in[1];
  auto channel = [&](const Expr& o, const Expr& rc) {
    return g == 1 ? rc : tir::floordiv(o, ci(opg)) * ci(cpg) + rc;
  };
  auto outChannel = [&](const Expr& o) { return g == 1 ? o : tir::floormod(o, ci(opg)); };
  const bool gemm = cpg >= 4 && N * KH * KW * O * H * W * 4 <= kMaxColBytes;
  std::optional<te::Tensor> col;
  if (gemm) {
    te::IterVar rc = te::reduceAxis(ci(cpg), "rc");
    col = te::compute(
        {ci(N), ci(KH), ci(KW), ci(O), ci(H), ci(W)},
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr c = channel(i[3], rc);
          return te::sum(D(i[0], c, i[4], i[5]) * Wt(c, outChannel(i[3]), i[1], i[2]), {rc});
        },
        "conv2d_transpose_col", "conv2d_transpose_col");
  }
  // The taps of output (y, x): kernel position, input position, validity.
  struct Tap {
    Expr ry, rx, iy, ix, valid;
  };
  auto tap = [&](const Expr& y, const Expr& x, const Expr& ty, const Expr& tx) {
    Expr hy = y + ci(p[0]), hx = x + ci(p[1]);
    Tap t;
    t.ry = tir::floormod(hy, ci(s[0])) + ty * ci(s[0]);
    t.rx = tir::floormod(hx, ci(s[1])) + tx * ci(s[1]);
    t.iy = tir::floordiv(hy, ci(s[0])) - ty;
    t.ix = tir::floordiv(hx, ci(s[1])) - tx;
    Expr vy = t.ry < ci(KH) && t.iy >= ci(0) && t.iy < ci(H);
    Expr vx = t.rx < ci(KW) && t.ix >= ci(0) && t.ix < ci(W);
    t.valid = ay.alwaysValid ? (ax.alwaysValid ? Expr() : vx) : (ax.alwaysValid ? vy : (vy && vx));
    if (!ay.alwaysValid) t.ry = clampIndex(t.ry, 0, KH - 1), t.iy = clampIndex(t.iy, 0, H - 1);
    if (!ax.alwaysValid) t.rx = clampIndex(t.rx, 0, KW - 1), t.ix = clampIndex(t.ix, 0, W - 1);
    return t;
  };
  auto guarded = [&](const Tap& t, Expr v) { return t.valid.defined() ? tir::select(t.valid, v, tir::makeZero(v.dtype())) : v; };
  const bool oneTap = ay.taps == 1 && ax.taps == 1;
  if (gemm && oneTap) {
    // One tap per output (a kernel no larger than the stride): a gather the epilogue inlines.
    return one(te::compute(
        teShape(out),
        [&](Var n, Var o, Var y, Var x) -> te::ComputeBody {
          Tap t = tap(y, x, ci(0), ci(0));
          return guarded(t, (*col)(n, t.ry, t.rx, o, t.iy, t.ix));
        },
        "conv2d_transpose_nchw", "conv2d_transpose_nchw"));
  }
  te::IterVar ty = te::reduceAxis(ci(ay.taps), "ty"), tx = te::reduceAxis(ci(ax.taps), "tx");
  if (gemm) {
    return one(te::compute(
        teShape(out),
        [&](Var n, Var o, Var y, Var x) -> te::ComputeBody {
          Tap t = tap(y, x, ty, tx);
          return te::sum(guarded(t, (*col)(n, t.ry, t.rx, o, t.iy, t.ix)), {ty, tx});
        },
        "conv2d_transpose_nchw", "conv2d_transpose_nchw"));
  }
  te::IterVar rc = te::reduceAxis(ci(cpg), "rc");
  return one(te::compute(
      teShape(out),
      [&](Var n, Var o, Var y, Var x) -> te::ComputeBody {
        Tap t = tap(y, x, ty, tx);
        Expr c = channel(o, rc);
        return te::sum(guarded(t, D(n, c, t.iy, t.ix) * Wt(c, outChannel(o), t.ry, t.rx)), {rc, ty, tx});
      },
      "conv2d_transpose_nchw", "conv2d_transpose_nchw"));
}

std::vector<te::Tensor> conv2dTranspose(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const auto& dl = call.attrs.getInts("dilation");
  // Without dilation: by phase (no tap that the stride makes zero is visited).
  if (dl[0] == 1 && dl[1] == 1) return conv2dTransposePhased(call, in, outType);
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  int64_t g = call.attrs.getInt("groups");
  std::vector<int64_t> ds = extents(in[0]), ws = extents(in[1]);
  int64_t cpg = ds[1] / g, opg = ws[1];
  te::IterVar rc = te::reduceAxis(ci(cpg), "rc"), ry = te::reduceAxis(ci(ws[2]), "ry"),
              rx = te::reduceAxis(ci(ws[3]), "rx");
  const te::Tensor &D = in[0], &W = in[1];
  return one(te::compute(
      teShape(out),
      [&](Var n, Var o, Var y, Var x) -> te::ComputeBody {
        Expr c = g == 1 ? Expr(rc) : tir::floordiv(o, ci(opg)) * ci(cpg) + rc;
        Expr oc = g == 1 ? Expr(o) : tir::floormod(o, ci(opg));
        Expr hy = Expr(y) + ci(p[0]) - Expr(ry) * ci(dl[0]);
        Expr hx = Expr(x) + ci(p[1]) - Expr(rx) * ci(dl[1]);
        Expr cond = hy >= ci(0) && hx >= ci(0) && tir::eq(tir::floormod(hy, ci(s[0])), ci(0)) &&
                    tir::eq(tir::floormod(hx, ci(s[1])), ci(0)) && tir::floordiv(hy, ci(s[0])) < ci(ds[2]) &&
                    tir::floordiv(hx, ci(s[1])) < ci(ds[3]);
        Expr iy = clampIndex(tir::floordiv(hy, ci(s[0])), 0, ds[2] - 1);
        Expr ix = clampIndex(tir::floordiv(hx, ci(s[1])), 0, ds[3] - 1);
        Expr v = D(n, c, iy, ix) * W(c, oc, ry, rx);
        return te::sum(tir::select(cond, v, tir::makeZero(v.dtype())), {rc, ry, rx});
      },
      "conv2d_transpose_nchw", "conv2d_transpose_nchw"));
}

std::vector<te::Tensor> dense(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  int64_t K = extents(in[1])[1];
  te::IterVar k = te::reduceAxis(ci(K), "k");
  return one(te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> a = exprs(i);
        a.back() = k;
        return te::sum(in[0](a) * in[1](Expr(i.back()), Expr(k)), {k});
      },
      "T_dense", "dense"));
}

std::vector<te::Tensor> matmul(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  // -1 marks a symbolic extent (never a broadcast 1); the reduction may be symbolic too
  // (attention's probabilities times values reduce over the sequence).
  std::vector<int64_t> sa = extentsOrSymbolic(in[0]), sb = extentsOrSymbolic(in[1]);
  bool va = sa.size() == 1, vb = sb.size() == 1;
  te::IterVar k = te::reduceAxis(in[0]->shape.back(), "k");
  return one(te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        // Output: batch..., [m unless va], [n unless vb].
        size_t nb = i.size() - (va ? 0 : 1) - (vb ? 0 : 1);
        auto batchIdx = [&](const std::vector<int64_t>& s, size_t tail) {
          std::vector<Expr> idx;
          size_t rank = s.size() - tail, off = nb - rank;
          for (size_t d = 0; d < rank; ++d) idx.push_back(s[d] == 1 ? ci(0) : Expr(i[d + off]));
          return idx;
        };
        std::vector<Expr> ai = va ? std::vector<Expr>{} : batchIdx(sa, 2);
        if (!va) ai.push_back(i[nb]);
        ai.push_back(k);
        std::vector<Expr> bi = vb ? std::vector<Expr>{} : batchIdx(sb, 2);
        bi.push_back(k);
        if (!vb) bi.push_back(i.back());
        return te::sum(in[0](ai) * in[1](bi), {k});
      },
      "T_matmul", "matmul"));
}

/// The layout of a pool's data must be NCHW or NCHW{k}c; both have the spatial dims at 2 and 3.
void checkPoolLayout(const CallNode& call, const te::Tensor& data) {
  int64_t b = dataBlock(call.attrs.getString("layout"));
  if (b < 0 || data->ndim() != (b > 0 ? 5u : 4u))
    LOOM_THROW(UnsupportedError) << graph::callDescription(call) << ": unsupported pool layout "
                                 << call.attrs.getString("layout") << " for rank-" << data->ndim() << " data";
}

/// `i` with its spatial dims (2, 3) replaced by `h`, `w`.
std::vector<Expr> withSpatial(const std::vector<Var>& i, Expr h, Expr w) {
  std::vector<Expr> idx = exprs(i);
  idx[2] = std::move(h);
  idx[3] = std::move(w);
  return idx;
}

std::vector<te::Tensor> pool(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType, bool avg) {
  const auto& out = staticTensor(outType, call);
  checkPoolLayout(call, in[0]);
  const auto& k = call.attrs.getInts("pool_size");
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  // The data's extents as expressions: symbolic dims stay symbolic.
  const std::vector<Expr>& is = in[0]->shape;
  te::IterVar ry = te::reduceAxis(ci(k[0]), "ry"), rx = te::reduceAxis(ci(k[1]), "rx");
  auto pos = [&](const std::vector<Var>& i) {
    return std::pair<Expr, Expr>{Expr(i[2]) * ci(s[0]) + Expr(ry) * ci(dl[0]) - ci(p[0]),
                                 Expr(i[3]) * ci(s[1]) + Expr(rx) * ci(dl[1]) - ci(p[1])};
  };
  auto inside = [&](const Expr& h, const Expr& w) {
    return h >= ci(0) && h < is[2] && w >= ci(0) && w < is[3];
  };
  const te::Tensor& D = in[0];
  DataType t = D->dtype;
  auto window = [&](const std::vector<Var>& i) {
    auto [h, w] = pos(i);
    return std::pair<Expr, Expr>{D(withSpatial(i, clampToExtent(h, is[2]), clampToExtent(w, is[3]))), inside(h, w)};
  };
  if (!avg)
    return one(te::compute(
        teShape(out),
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          auto [v, cond] = window(i);
          return te::max(v, {ry, rx}, cond);
        },
        "pool_max", "pool_max"));
  te::Tensor sum = te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        auto [v, cond] = window(i);
        return te::sum(v, {ry, rx}, cond);
      },
      "pool_sum", "pool_sum");
  bool includePad = call.attrs.getInt("count_include_pad") != 0;
  // The divisor: the window's points inside the data (or inside data + padding).
  std::vector<Expr> os = teShape(out);
  te::IterVar cy = te::reduceAxis(ci(k[0]), "cy"), cx = te::reduceAxis(ci(k[1]), "cx");
  te::Tensor count = te::compute(
      {os[2], os[3]},
      [&](Var y, Var x) -> te::ComputeBody {
        Expr h = Expr(y) * ci(s[0]) + Expr(cy) * ci(dl[0]) - ci(p[0]);
        Expr w = Expr(x) * ci(s[1]) + Expr(cx) * ci(dl[1]) - ci(p[1]);
        Expr cond = includePad ? (h < is[2] + ci(p[2]) && w < is[3] + ci(p[3]))
                               : (h >= ci(0) && h < is[2] && w >= ci(0) && w < is[3]);
        return te::sum(tir::makeConst(t, 1.0), {cy, cx}, cond);
      },
      "pool_count", "pool_count");
  return one(te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return sum(exprs(i)) / tir::max(count(i[2], i[3]), tir::makeConst(t, 1.0));
      },
      "pool_avg", "elemwise"));
}

std::vector<te::Tensor> globalPool(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType,
                                   bool avg) {
  const auto& out = staticTensor(outType, call);
  checkPoolLayout(call, in[0]);
  const std::vector<Expr>& is = in[0]->shape;
  te::IterVar ry = te::reduceAxis(is[2], "ry"), rx = te::reduceAxis(is[3], "rx");
  const te::Tensor& D = in[0];
  // A mean over a big map (an InstanceNorm's in NCHWc, which ConvertLayout makes a global pool)
  // accumulates in float64 (sumAccumulator).
  const Expr count = extentProduct({is[2], is[3]});
  const DataType acc = avg ? sumAccumulator(D->dtype, count) : D->dtype;
  te::Tensor r = te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> idx = withSpatial(i, ry, rx);
        Expr v = acc == D->dtype ? D(idx) : tir::cast(acc, D(idx));
        return avg ? te::sum(v, {ry, rx}) : te::max(v, {ry, rx});
      },
      avg ? "global_pool_sum" : "global_pool_max", "global_pool");
  if (!avg) return one(r);
  return one(te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr m = r(exprs(i)) / extentValue(acc, count);
        return acc == D->dtype ? m : tir::cast(D->dtype, m);
      },
      "global_pool_avg", "elemwise"));
}

std::vector<te::Tensor> softmax(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType,
                                bool log) {
  const auto& out = staticTensor(outType, call);
  const std::vector<Expr>& s = in[0]->shape;
  size_t axis = size_t(normAxis(call.attrs.getInt("axis"), int64_t(s.size())));
  const te::Tensor& X = in[0];
  std::vector<Expr> redShape = teShape(out);
  redShape[axis] = ci(1);
  te::IterVar k1 = te::reduceAxis(s[axis], "k");
  te::Tensor mx = te::compute(
      redShape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> idx = exprs(i);
        idx[axis] = k1;
        return te::max(X(idx), {k1});
      },
      "T_softmax_maxelem", "softmax");
  te::Tensor e = te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> ri = exprs(i);
        ri[axis] = ci(0);
        return tir::call(X->dtype, "exp", {X(exprs(i)) - mx(ri)});
      },
      "T_softmax_exp", "softmax");
  te::IterVar k2 = te::reduceAxis(s[axis], "k");
  te::Tensor sum = te::compute(
      redShape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> idx = exprs(i);
        idx[axis] = k2;
        return te::sum(e(idx), {k2});
      },
      "T_softmax_expsum", "softmax");
  return one(te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> ri = exprs(i);
        ri[axis] = ci(0);
        if (log) return X(exprs(i)) - mx(ri) - tir::call(X->dtype, "log", {sum(ri)});
        return e(exprs(i)) / sum(ri);
      },
      "T_softmax_norm", "softmax"));
}

/// mean and variance of `X` over the dims in `axes` (kept as extent 1), then the normalized
/// value times `scale(i)` plus `bias(i)`.
std::vector<te::Tensor> normalize(const CallNode& call, const te::Tensor& X, const std::vector<size_t>& axes,
                                  const Type& outType,
                                  const std::function<Expr(const std::vector<Var>&, Expr)>& affine) {
  const auto& out = staticTensor(outType, call);
  const std::vector<Expr>& s = X->shape;  // symbolic dims stay expressions
  std::vector<Expr> redShape = teShape(out);
  std::vector<Expr> reduced;
  for (size_t a : axes) {
    redShape[a] = ci(1);
    reduced.push_back(s[a]);
  }
  const Expr count = extentProduct(reduced);
  double eps = call.attrs.getFloat("epsilon");
  DataType t = X->dtype;
  auto reduceOver = [&](const std::string& name, const std::function<Expr(const std::vector<Expr>&)>& f) {
    return te::compute(
        redShape,
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          std::vector<te::IterVar> ks;
          std::vector<Expr> idx = exprs(i);
          for (size_t a : axes) {
            ks.push_back(te::reduceAxis(s[a], "k" + std::to_string(a)));
            idx[a] = ks.back();
          }
          return te::sum(f(idx), ks);
        },
        name, "norm");
  };
  auto redIdx = [&](const std::vector<Var>& i) {
    std::vector<Expr> r = exprs(i);
    for (size_t a : axes) r[a] = ci(0);
    return r;
  };
  te::Tensor sum = reduceOver("T_norm_sum", [&](const std::vector<Expr>& idx) { return X(idx); });
  te::Tensor mean = te::compute(
      redShape, [&](const std::vector<Var>& i) -> te::ComputeBody { return sum(exprs(i)) / extentValue(t, count); },
      "T_norm_mean", "norm");
  te::Tensor sq = reduceOver("T_norm_sqsum", [&](const std::vector<Expr>& idx) {
    std::vector<Expr> ri = idx;
    for (size_t a : axes) ri[a] = ci(0);
    Expr d = X(idx) - mean(ri);
    return d * d;
  });
  return one(te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr var = sq(redIdx(i)) / extentValue(t, count);
        Expr v = (X(exprs(i)) - mean(redIdx(i))) / tir::call(t, "sqrt", {var + tir::makeConst(t, eps)});
        return affine(i, v);
      },
      "T_norm", "norm"));
}

}  // namespace

void registerNNComputes() {
  setCompute("nn.conv2d", conv2d);
  setCompute("nn.conv2d_transpose", conv2dTranspose);
  setCompute("nn.dense", dense);
  setCompute("nn.matmul", matmul);
  setCompute("nn.max_pool2d", [](const CallNode& c, const std::vector<te::Tensor>& in, const Type& t) {
    return pool(c, in, t, false);
  });
  setCompute("nn.avg_pool2d", [](const CallNode& c, const std::vector<te::Tensor>& in, const Type& t) {
    return pool(c, in, t, true);
  });
  setCompute("nn.global_avg_pool2d", [](const CallNode& c, const std::vector<te::Tensor>& in, const Type& t) {
    return globalPool(c, in, t, true);
  });
  setCompute("nn.global_max_pool2d", [](const CallNode& c, const std::vector<te::Tensor>& in, const Type& t) {
    return globalPool(c, in, t, false);
  });
  setCompute("nn.softmax", [](const CallNode& c, const std::vector<te::Tensor>& in, const Type& t) {
    return softmax(c, in, t, false);
  });
  setCompute("nn.log_softmax", [](const CallNode& c, const std::vector<te::Tensor>& in, const Type& t) {
    return softmax(c, in, t, true);
  });
  setCompute("nn.layer_norm", [](const CallNode& c, const std::vector<te::Tensor>& in, const Type& t) {
    size_t nd = in[0]->ndim();
    size_t axis = size_t(normAxis(c.attrs.getInt("axis"), int64_t(nd)));
    std::vector<size_t> axes;
    for (size_t a = axis; a < nd; ++a) axes.push_back(a);
    return normalize(c, in[0], axes, t, [&](const std::vector<Var>& i, Expr v) {
      std::vector<Var> tail(i.begin() + long(axis), i.end());
      return v * broadcastLoad(in[1], tail) + broadcastLoad(in[2], tail);
    });
  });
  setCompute("nn.instance_norm", [](const CallNode& c, const std::vector<te::Tensor>& in, const Type& t) {
    size_t nd = in[0]->ndim();
    std::vector<size_t> axes;
    for (size_t a = 2; a < nd; ++a) axes.push_back(a);
    return normalize(c, in[0], axes, t, [&](const std::vector<Var>& i, Expr v) {
      return v * in[1](Expr(i[1])) + in[2](Expr(i[1]));
    });
  });
}

}  // namespace loom::topi::nn
