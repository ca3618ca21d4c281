// WinogradConv: picks Winograd F(m x m, 3x3) for the blocked 3x3 stride-1 convolutions.
#include "core/graph/pass/WinogradConv.h"

#include "core/graph/Layout.h"
#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/Winograd.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

int64_t winogradTileFor(const CallNode& c, int64_t maxKernelBytes) {
  if (!c.op || c.op->name != "nn.conv2d" || c.args.size() != 2 || !c.args[1].as<ConstantNode>()) return 0;
  std::optional<Layout> dl = parseLayout(c.attrs.getString("data_layout"));
  std::optional<Layout> kl = parseLayout(c.attrs.getString("kernel_layout"));
  if (!dl || dl->kernel || dl->blockA <= 1 || !kl || !kl->kernel) return 0;
  if (c.attrs.getInt("groups") != 1) return 0;
  for (int64_t v : c.attrs.getInts("strides"))
    if (v != 1) return 0;
  for (int64_t v : c.attrs.getInts("dilation"))
    if (v != 1) return 0;
  auto* w = inferType(c.args[1]).as<TensorTypeNode>();
  Type yt(c.checkedType);
  auto* y = yt.as<TensorTypeNode>();
  if (!w || !y || !w->isStatic() || w->ndim() != 6 || y->ndim() != 5) return 0;
  if (!w->dtype.isFloat()) return 0;  // integer (quantized) convs stay exact
  std::vector<int64_t> ws = w->staticShape();
  if (ws[2] != 3 || ws[3] != 3) return 0;
  // Few input channels (an RGB stem): the batched products have a reduction of a few terms and
  // the transforms dominate. VGG's 3 -> 64 conv at 224x224 took 13.3 ms as F(4x4), 0.81 direct.
  if (ws[1] * ws[4] < kMinWinogradInChannels) return 0;
  int64_t m = 0;
  if (y->shape[2].isStatic() && y->shape[3].isStatic()) {
    const int64_t oh = y->shape[2].value, ow = y->shape[3].value;
    m = oh % 4 == 0 && ow % 4 == 0 ? 4 : oh % 2 == 0 && ow % 2 == 0 ? 2 : 0;
  } else if (y->shape[1].isStatic()) {
    // A symbolic image size (a dynamic model): F(4x4), its last tiles partial where the size
    // is not a multiple of 4.
    m = 4;
  }
  if (m == 0) return 0;
  // The input transform is written whole before the batched products read it: past a few MiB
  // it streams through memory three times (transform, products, inverse), and the direct conv
  // wins. UNet's 32 -> 32 conv at 256x256 (18.9 MB): 49 ms as F(4x4), 9.3 direct; 64 -> 64 at
  // 128x128 (9.4 MB) 25 against 13; VGG's 64 -> 128 at 112x112 (7.2 MB) 9.4 against 15.8.
  if (y->shape[0].isStatic() && y->shape[2].isStatic() && y->shape[3].isStatic()) {
    const int64_t tiles = y->shape[0].value * ((y->shape[2].value + m - 1) / m) * ((y->shape[3].value + m - 1) / m);
    const int64_t dataBytes = tiles * ws[1] * ws[4] * (m + 2) * (m + 2) * w->dtype.bytes();
    if (dataBytes > kMaxWinogradDataBytes) return 0;
  }
  auto kernelBytes = [&](int64_t t) { return (t + 2) * (t + 2) * (w->numel() / 9) * w->dtype.bytes(); };
  // Over a symbolic image, F(2x2) where F(4x4)'s transformed weights are too big (a dynamic
  // ResNet's 256-channel stage: 9.4 MB against 4.2), as a static image of even size takes it.
  if (m == 4 && kernelBytes(4) > maxKernelBytes && !(y->shape[2].isStatic() && y->shape[3].isStatic())) m = 2;
  return kernelBytes(m) <= maxKernelBytes ? m : 0;
}

namespace {

class WinogradRewriter : public ExprMutator {
public:
  explicit WinogradRewriter(int64_t maxKernelBytes) : m_maxKernelBytes(maxKernelBytes) {}

private:
  int64_t m_maxKernelBytes;

  Expr rewrite(const Expr&, const Expr& e) override {
    auto* c = e.as<CallNode>();
    if (!c) return e;
    inferType(e);
    const int64_t m = winogradTileFor(*c, m_maxKernelBytes);
    if (m == 0) return e;
    Expr u = makeCall("nn.winograd_weight_transform", {c->args[1]}, {{"tile_size", m}});
    Attrs attrs;
    attrs.set("tile_size", m);
    attrs.set("padding", c->attrs.getInts("padding"));
    return makeCall("nn.conv2d_winograd", {c->args[0], u}, attrs, c->name);
  }
};

}  // namespace

Expr winogradConv(const Expr& e, int64_t maxKernelBytes) {
  inferType(e);
  return WinogradRewriter(maxKernelBytes).mutate(e);
}

Module winogradConv(const Module& m, int64_t maxKernelBytes) {
  return mapFunctions(m, [&](const Expr& e) { return winogradConv(e, maxKernelBytes); });
}

}  // namespace loom::graph
