// PruneConvTaps: cuts the dead kernel taps of a conv2d (see PruneConvTaps.h).
#include "core/graph/pass/PruneConvTaps.h"

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
    if (!cut) return e;
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
