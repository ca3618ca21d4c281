// TE compute of nn.conv2d_winograd: Winograd F(m x m, 3x3) on channel-blocked (NCHW{k}c) data.
#include "core/topi/nn/Winograd.h"

#include "core/graph/Winograd.h"
#include "core/topi/Ops.h"
#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

namespace {

using graph::CallNode;
using graph::Type;
using graph::WinogradMatrices;

/// acc + k * v, with +-1 as an addition / subtraction (acc undefined: the first term).
Expr addScaled(const Expr& acc, double k, const Expr& v, DataType t) {
  if (!acc.defined()) return k == 1 ? v : k == -1 ? -v : tir::floatImm(t, k) * v;
  if (k == 1) return acc + v;
  if (k == -1) return acc - v;
  return acc + tir::floatImm(t, k) * v;
}

/// sum_{i, j} L[r][i] * L[c][j] * load(i, j) for constant row indices r and c, only the nonzero
/// coefficients. `separable`: as sum_i L[r][i] * (sum_j L[c][j] * load(i, j)), each inner sum
/// built the same way for every r, so once the tile positions are unrolled the code generator
/// computes each (i, c) sum once and the transform costs two 1-D passes. The input transform
/// (B^T d B) is separable: with F(4x4)'s points 0, 1, -1, 2, -1/2, B^T's first and last rows have
/// 5 nonzeros instead of 3, and one sum over every (i, j) pair took 676 terms a tile instead of
/// 484; DenseNet-121's F(4x4) kernels (32 output channels, so the input transform is a large
/// share) ran 20% slower that way, 2% separable. The inverse (A^T M A) has the same nonzeros for
/// both point sets and stays one sum per entry, as before.
Expr bilinear(const std::vector<std::vector<double>>& L, size_t r, size_t c, const std::function<Expr(int64_t, int64_t)>& load,
              DataType t, bool separable) {
  Expr acc;
  if (!separable) {
    for (size_t i = 0; i < L[r].size(); ++i)
      for (size_t j = 0; j < L[c].size(); ++j)
        if (L[r][i] * L[c][j] != 0) acc = addScaled(acc, L[r][i] * L[c][j], load(int64_t(i), int64_t(j)), t);
    return acc.defined() ? acc : tir::makeZero(t);
  }
  for (size_t i = 0; i < L[r].size(); ++i) {
    if (L[r][i] == 0) continue;
    Expr inner;
    for (size_t j = 0; j < L[c].size(); ++j)
      if (L[c][j] != 0) inner = addScaled(inner, L[c][j], load(int64_t(i), int64_t(j)), t);
    if (inner.defined()) acc = addScaled(acc, L[r][i], inner, t);
  }
  return acc.defined() ? acc : tir::makeZero(t);
}

/// The value at (x, y) of an L x L transform whose (r, c) entry is bilinear(L, r, c): a select
/// over (x, y) that folds to one entry once the x and y loops are unrolled.
Expr transformEntry(const std::vector<std::vector<double>>& L, const Var& x, const Var& y,
                    const std::function<Expr(int64_t, int64_t)>& load, DataType t, bool separable) {
  const size_t n = L.size();
  Expr v = bilinear(L, n - 1, n - 1, load, t, separable);
  for (size_t k = n * n - 1; k-- > 0;) {
    const size_t r = k / n, c = k % n;
    v = tir::select(tir::eq(x, ci(int64_t(r))) && tir::eq(y, ci(int64_t(c))), bilinear(L, r, c, load, t, separable), v);
  }
  return v;
}

/// data [N, C/ib, H, W, ib], U [a, a, O/ob, C/ib, ib, ob] -> out [N, O/ob, OH, OW, ob]:
///   pad_temp   the zero-padded input;
///   data_pack  [P, C/ib, a, a, ib]     B^T d B of each input tile (P = N * OH/m * OW/m tiles);
///   bgemm      [a, a, P, O/ob, ob]     per Winograd point, the tiles times the kernel over C;
///   inverse    [P, O/ob, m, m, ob]     A^T M A of each tile;
///   the output reads the tile element of inverse.
std::vector<te::Tensor> conv2dWinograd(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const WinogradMatrices& wm = graph::winogradMatrices(call.attrs.getInt("tile_size"));
  const auto& p = call.attrs.getInts("padding");
  const std::vector<int64_t> ds = extentsOrSymbolic(in[0]), us = extents(in[1]);
  const std::vector<Expr> os = teShape(out);
  const int64_t m = wm.m, a = wm.alpha, CB = ds[1], IB = ds[4], OB = us[2], OBk = us[5];
  // Tiles per column and row: with a symbolic image size the last ones may be partial; their
  // inputs beyond the padded data read zeros and their outputs beyond the image are not kept.
  // (Static shapes keep constant extents: the flop count and the schedule rules read them.)
  auto tiles = [&](const Expr& o) -> Expr {
    if (const int64_t* c = tir::asConstInt(o)) return ci((*c + m - 1) / m);
    return tir::floordiv(o + ci(m - 1), ci(m));
  };
  const Expr nH = tiles(os[2]), nW = tiles(os[3]), nHW = extentProduct({nH, nW}), P = extentProduct({in[0]->shape[0], nHW});
  const DataType t = in[0]->dtype;
  const std::vector<Expr>& xs = in[0]->shape;
  const bool staticImage = tir::asConstInt(os[2]) && tir::asConstInt(os[3]);
  te::Tensor data = staticImage ? topi::pad(in[0], {0, 0, p[0], p[1], 0}, {0, 0, p[2], p[3], 0}, 0.0, "pad_temp") : te::compute(
      {xs[0], xs[1], nH * ci(m) + ci(2), nW * ci(m) + ci(2), xs[4]},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr h = Expr(i[2]) - ci(p[0]), w = Expr(i[3]) - ci(p[1]);
        Expr inside = h >= ci(0) && h < xs[2] && w >= ci(0) && w < xs[3];
        // A select of a load at the clamped position, not a guarded load: the transform reads
        // each of a tile's 36 positions in several sums; the clamped loads are always in bounds,
        // so the code generator loads each once, without a branch (a guarded load is a branch
        // per use, 3.6x slower over a symbolic width, whose last tile's guards do not fold).
        Expr hc = tir::max(tir::min(h, xs[2] - ci(1)), ci(0)), wc = tir::max(tir::min(w, xs[3] - ci(1)), ci(0));
        return tir::select(inside, in[0](std::vector<Expr>{i[0], i[1], hc, wc, i[4]}), tir::makeConst(t, 0.0));
      },
      "pad_temp", "injective");
  const tir::Annotations transform{{"schedule_rule", tir::stringImm(graph::kWinogradTransformRule)}};
  te::Tensor dataPack = te::compute(
      {P, ci(CB), ci(a), ci(a), ci(IB)},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr n = tir::floordiv(i[0], nHW), th = tir::floormod(tir::floordiv(i[0], nW), nH),
             tw = tir::floormod(i[0], nW);
        return transformEntry(
            wm.BT, i[2], i[3], [&](int64_t r, int64_t c) { return data(n, i[1], th * ci(m) + ci(r), tw * ci(m) + ci(c), i[4]); },
            t, /*separable=*/true);
      },
      "data_pack", "winograd_data_pack", transform);
  te::IterVar rcb = te::reduceAxis(ci(CB), "rcb"), rci = te::reduceAxis(ci(IB), "rci");
  const te::Tensor& U = in[1];
  te::Tensor bgemm = te::compute(
      {ci(a), ci(a), P, ci(OB), ci(OBk)},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return te::sum(dataPack(i[2], rcb, i[0], i[1], rci) * U(i[0], i[1], i[3], rcb, rci, i[4]), {rcb, rci});
      },
      "bgemm", "winograd_bgemm");
  te::Tensor inverse = te::compute(
      {P, ci(OB), ci(m), ci(m), ci(OBk)},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return transformEntry(
            wm.AT, i[2], i[3], [&](int64_t r, int64_t c) { return bgemm(ci(r), ci(c), i[0], i[1], i[4]); }, t, /*separable=*/false);
      },
      "inverse", "winograd_inverse", transform);
  return {te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr tile = (Expr(i[0]) * nH + tir::floordiv(i[2], ci(m))) * nW + tir::floordiv(i[3], ci(m));
        return inverse(tile, i[1], tir::floormod(i[2], ci(m)), tir::floormod(i[3], ci(m)), i[4]);
      },
      "conv2d_winograd", "conv2d_winograd")};
}

}  // namespace

bool isWinogradTransform(const tir::BlockNode* block) {
  auto it = block->annotations.find("schedule_rule");
  if (it == block->annotations.end()) return false;
  const auto* rule = it->second.as<tir::StringImmNode>();
  return rule && rule->value == graph::kWinogradTransformRule;
}

void registerWinogradComputes() { setCompute("nn.conv2d_winograd", conv2dWinograd); }

}  // namespace loom::topi::nn
