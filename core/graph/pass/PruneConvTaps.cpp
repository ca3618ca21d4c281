// PruneConvTaps: cuts the dead kernel taps of a conv2d (see PruneConvTaps.h).
#include "core/graph/pass/PruneConvTaps.h"

#include <algorithm>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

namespace {

/// The live taps [first, last] of one spatial dimension: input extent `in`, output extent
/// `out`, kernel extent `k`, stride, dilation, padding before. Tap t reads the rows
/// t * dilation - padBefore + y * stride for y in [0, out).
std::pair<int64_t, int64_t> liveTaps(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation,
                                     int64_t padBefore) {
  auto live = [&](int64_t t) {
    const int64_t lo = t * dilation - padBefore, hi = lo + (out - 1) * stride;
    return hi >= 0 && lo <= in - 1;
  };
  int64_t first = 0, last = k - 1;
  while (first < k && !live(first)) ++first;
  while (last > first && !live(last)) --last;
  return {first, last};
}

/// The output positions [lo, hi) where tap t reads inside the input (stride 1).
std::pair<int64_t, int64_t> liveOutputs(int64_t in, int64_t out, int64_t t, int64_t dilation, int64_t padBefore) {
  const int64_t off = t * dilation - padBefore;  // output y reads input y + off
  return {std::clamp<int64_t>(-off, 0, out), std::clamp<int64_t>(in - off, 0, out)};
}

/// A dilated conv whose every tap reads data only over part of the output (DeepLab's ASPP at
/// dilation 12 on a 16x16 map: the off-centre taps see a 4-row or 4-column band, the corners a
/// 4x4 square) does at most half its multiply-adds on padding. Such a conv (stride 1, groups 1,
/// live work at most half) becomes one 1x1 conv per live tap over the input window that tap
/// reads, each padded back to the output's extent and summed: the same sum of products, the
/// padding's zeros left out. Returns `e` unchanged when the conv is not so.
Expr splitSparseTaps(const Expr& e, const CallNode* c, const std::vector<int64_t>& ds, const std::vector<int64_t>& ws,
                     const std::vector<int64_t>& ys) {
  const auto& s = c->attrs.getInts("strides");
  const auto& dl = c->attrs.getInts("dilation");
  const auto& pad = c->attrs.getInts("padding");
  if (c->attrs.getInt("groups") != 1 || s[0] != 1 || s[1] != 1 || (dl[0] == 1 && dl[1] == 1)) return e;
  const int64_t kh = ws[2], kw = ws[3], oh = ys[2], ow = ys[3];
  struct Tap {
    int64_t ky, kx, y0, y1, x0, x1;
  };
  std::vector<Tap> taps;
  int64_t live = 0;
  for (int64_t ky = 0; ky < kh; ++ky)
    for (int64_t kx = 0; kx < kw; ++kx) {
      const auto [y0, y1] = liveOutputs(ds[2], oh, ky, dl[0], pad[0]);
      const auto [x0, x1] = liveOutputs(ds[3], ow, kx, dl[1], pad[1]);
      if (y1 <= y0 || x1 <= x0) continue;
      taps.push_back({ky, kx, y0, y1, x0, x1});
      live += (y1 - y0) * (x1 - x0);
    }
  if (taps.empty() || 2 * live > kh * kw * oh * ow) return e;
  // The centre-most tap (usually live everywhere) first: the sum starts from a full conv.
  std::stable_sort(taps.begin(), taps.end(), [](const Tap& a, const Tap& b) {
    return (a.y1 - a.y0) * (a.x1 - a.x0) > (b.y1 - b.y0) * (b.x1 - b.x0);
  });
  Expr sum;
  using IntList = std::vector<int64_t>;
  const IntList ones{1, 1, 1, 1}, axes{0, 1, 2, 3};
  for (const Tap& t : taps) {
    const int64_t iy = t.y0 + t.ky * dl[0] - pad[0], ix = t.x0 + t.kx * dl[1] - pad[1];
    // (Rows and columns only: ConvertLayout slices a channel-blocked input the same way.)
    Expr window = makeCall("strided_slice", {c->args[0]},
                           {{"begin", IntList{iy, ix}},
                            {"end", IntList{iy + t.y1 - t.y0, ix + t.x1 - t.x0}},
                            {"strides", IntList{1, 1}},
                            {"axes", IntList{2, 3}}});
    Expr w = makeCall("strided_slice", {c->args[1]},
                      {{"begin", IntList{0, 0, t.ky, t.kx}},
                       {"end", IntList{ws[0], ws[1], t.ky + 1, t.kx + 1}},
                       {"strides", ones},
                       {"axes", axes}});
    Attrs attrs = c->attrs;
    attrs.set("padding", IntList{0, 0, 0, 0});
    attrs.set("dilation", IntList{1, 1});
    Expr part = makeCall("nn.conv2d", {window, w}, attrs, sum.defined() ? std::string() : c->name);
    if (t.y0 != 0 || t.x0 != 0 || t.y1 != oh || t.x1 != ow)
      part = makeCall("nn.pad", {part}, {{"pad_width", IntList{0, 0, 0, 0, t.y0, oh - t.y1, t.x0, ow - t.x1}}});
    sum = sum.defined() ? makeCall("add", {sum, part}) : part;
  }
  return sum;
}

class TapPruner : public ExprMutator {
  Expr rewrite(const Expr&, const Expr& e) override {
    auto* c = e.as<CallNode>();
    if (!c || !c->op || c->op->name != "nn.conv2d" || c->args.size() != 2 || !c->args[1].as<ConstantNode>()) return e;
    if (c->attrs.getString("data_layout") != "NCHW" || c->attrs.getString("kernel_layout") != "OIHW") return e;
    inferType(e);
    auto* d = inferType(c->args[0]).as<TensorTypeNode>();
    auto* w = inferType(c->args[1]).as<TensorTypeNode>();
    Type yt(c->checkedType);
    auto* y = yt.as<TensorTypeNode>();
    if (!d || !w || !y || !d->isStatic() || !w->isStatic() || !y->isStatic() || d->ndim() != 4 || w->ndim() != 4)
      return e;
    const std::vector<int64_t> ds = d->staticShape(), ws = w->staticShape(), ys = y->staticShape();
    const auto& s = c->attrs.getInts("strides");
    const auto& dl = c->attrs.getInts("dilation");
    std::vector<int64_t> pad = c->attrs.getInts("padding");  // top, left, bottom, right
    std::vector<int64_t> begin{0, 0, 0, 0}, end = ws;
    bool cut = false;
    for (int i = 0; i < 2; ++i) {
      const auto [first, last] = liveTaps(ds[2 + i], ys[2 + i], ws[2 + i], s[i], dl[i], pad[i]);
      if (first == 0 && last == ws[2 + i] - 1) continue;
      // Every tap dead (an output of padding only) or a cut that would need negative padding:
      // leave the conv as it is.
      if (first > last || pad[i] - first * dl[i] < 0 || pad[i + 2] - (ws[2 + i] - 1 - last) * dl[i] < 0) return e;
      pad[i] -= first * dl[i];
      pad[i + 2] -= (ws[2 + i] - 1 - last) * dl[i];
      begin[2 + i] = first;
      end[2 + i] = last + 1;
      cut = true;
    }
    if (!cut) return splitSparseTaps(e, c, ds, ws, ys);
    Expr weight = makeCall("strided_slice", {c->args[1]},
                           {{"begin", begin}, {"end", end}, {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                            {"axes", std::vector<int64_t>{0, 1, 2, 3}}});
    Attrs attrs = c->attrs;
    attrs.set("padding", pad);
    return makeCall("nn.conv2d", {c->args[0], weight}, attrs, c->name);
  }
};

}  // namespace

Expr pruneConvTaps(const Expr& e) {
  inferType(e);
  return TapPruner().mutate(e);
}

Module pruneConvTaps(const Module& m) {
  return mapFunctions(m, [&](const Expr& e) { return pruneConvTaps(e); });
}

}  // namespace loom::graph
