// ConvertLayout: NCHW conv2d -> NCHW{k}c with layout_transform sinking and cancellation.
#include "core/graph/pass/ConvertLayout.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/graph/Layout.h"
#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/SymDim.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

namespace {

int64_t largestDivisor(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

int64_t roundUp(int64_t n, int64_t k) { return (n + k - 1) / k * k; }

/// The channel block of a tensor with `channels` channels: `block` when it divides them; for
/// more channels than a block that it does not divide, `block` with the channels padded up to a
/// multiple of it when that adds at most a third (58 -> 64, 116 -> 128, 24 -> 32, 40 -> 48: full
/// vector lanes), else the largest divisor of at least 4 (or `block`, padded). Fewer channels
/// than a block are one block (3 input channels: NCHW3c); 1 channel has none (returns 1).
int64_t channelBlock(int64_t channels, int64_t block) {
  if (channels % block == 0) return block;
  if (channels < block) return largestDivisor(channels, block);
  if ((roundUp(channels, block) - channels) * 3 <= channels) return block;
  const int64_t d = largestDivisor(channels, block);
  return d >= 4 ? d : block;
}

std::string dataLayout(int64_t block) {
  return block > 1 ? "NCHW" + std::to_string(block) + "c" : "NCHW";
}

Expr transform(const Expr& x, const std::string& from, const std::string& to) {
  if (from == to) return x;
  return makeCall("layout_transform", {x}, {{"src_layout", from}, {"dst_layout", to}});
}

int64_t blockOf(const std::string& layout) {
  return parseLayout(layout)->blockA;
}

/// Channel slice [0, channels) of an NCHW tensor: drops the padding of a padded blocked tensor.
Expr sliceChannels(const Expr& x, int64_t channels) {
  return makeCall("strided_slice", {x},
                  {{"begin", std::vector<int64_t>{0}}, {"end", std::vector<int64_t>{channels}},
                   {"strides", std::vector<int64_t>{1}}, {"axes", std::vector<int64_t>{1}}});
}

/// The channel slice `sliceChannels` makes; its channel count, or -1.
int64_t channelSliceEnd(const CallNode& c) {
  if (!c.op || c.op->name != "strided_slice") return -1;
  const auto& b = c.attrs.getInts("begin");
  const auto& en = c.attrs.getInts("end");
  const auto& st = c.attrs.getInts("strides");
  const auto& ax = c.attrs.getInts("axes");
  if (b != std::vector<int64_t>{0} || en.size() != 1 || ax != std::vector<int64_t>{1} ||
      (!st.empty() && st != std::vector<int64_t>{1}))
    return -1;
  return en[0];
}

/// The channels of a 4-D NCHW tensor, or -1.
int64_t channelsOf(const Expr& e) {
  auto* t = inferType(e).as<TensorTypeNode>();
  if (!t || t->ndim() != 4 || !t->shape[1].isStatic()) return -1;
  return t->shape[1].value;
}

/// A tensor that is a blocked tensor `src` brought back to NCHW: layout_transform(src, layout ->
/// NCHW), followed by a channel slice when `src` carries padding channels (`padded` > `channels`).
/// The padding channels of a blocked tensor hold finite values that nothing observes: convs read
/// them with zero weights, and they are sliced off on the way back to NCHW.
struct Blocked {
  Expr src;
  std::string layout;
  int64_t channels = 0;
  int64_t padded = 0;
  bool isPadded() const { return padded != channels; }
};

std::optional<Blocked> asBlocked(const Expr& e) {
  auto* c = e.as<CallNode>();
  if (!c || !c->op) return std::nullopt;
  int64_t channels = channelSliceEnd(*c);
  if (channels >= 0) {
    c = c->args[0].as<CallNode>();
    if (!c || !c->op) return std::nullopt;
  }
  if (c->op->name != "layout_transform" || c->attrs.getString("dst_layout") != "NCHW") return std::nullopt;
  Blocked b;
  b.layout = c->attrs.getString("src_layout");
  std::optional<Layout> l = parseLayout(b.layout);
  if (!l || l->kernel || l->isPlain()) return std::nullopt;
  b.src = c->args[0];
  auto* t = inferType(b.src).as<TensorTypeNode>();
  if (!t || t->ndim() != 5 || !t->shape[1].isStatic() || !t->shape[4].isStatic()) return std::nullopt;
  b.padded = t->shape[1].value * t->shape[4].value;
  b.channels = channels >= 0 ? channels : b.padded;
  if (b.channels > b.padded) return std::nullopt;
  return b;
}

/// Blocked `src` back to NCHW with `channels` channels.
Expr toPlain(const Expr& src, const std::string& layout, int64_t channels) {
  Expr t = transform(src, layout, "NCHW");
  return channels == channelsOf(t) ? t : sliceChannels(t, channels);
}

/// Unary elementwise ops that keep the padding channels finite (they map finite to finite).
bool keepsPaddingFinite(const std::string& op) {
  static const std::set<std::string> ops{"nn.relu", "nn.leaky_relu", "sigmoid", "tanh", "clip", "negative",
                                         "abs", "copy", "float_fence", "qnn.fma_add", "erf", "floor", "ceil", "round", "sign",
                                         "nn.dropout", "add", "subtract", "multiply", "maximum", "minimum"};
  return ops.count(op) > 0;
}

class LayoutConverter : public ExprMutator {
public:
  explicit LayoutConverter(int64_t block) : m_block(block) {}

private:
  int64_t m_block;

  /// `e` (NCHW) in layout NCHW{k}c, reusing a blocked tensor that just left a layout. The result
  /// may have more channels than `e` (padding channels, zero or not observed).
  Expr toBlocked(const Expr& e, int64_t k) {
    // One transform per tensor and block, however many convs read it (an input feeding two
    // branches).
    auto key = std::make_pair(static_cast<const void*>(e.get()), k);
    if (auto it = m_blockedOf.find(key); it != m_blockedOf.end()) return it->second.second;
    Expr r = makeBlocked(e, k);
    m_blockedOf[key] = {e, r}; // holds `e`, so its address names no other node later
    return r;
  }
  std::map<std::pair<const void*, int64_t>, std::pair<Expr, Expr>> m_blockedOf;

  Expr makeBlocked(const Expr& e, int64_t k) {
    if (std::optional<Blocked> b = asBlocked(e)) {
      if (blockOf(b->layout) == k) return b->src;
      if (b->padded % k == 0) return transform(b->src, b->layout, dataLayout(k));
    }
    const int64_t c = channelsOf(e);
    Expr x = e;
    if (c % k) {
      std::vector<int64_t> pw(8, 0);
      pw[3] = roundUp(c, k) - c;
      x = makeCall("nn.pad", {e}, {{"pad_width", pw}});
    }
    return transform(x, "NCHW", dataLayout(k));
  }

  /// A weight (O, I, KH, KW) padded with zeros to `o` output and `i` input channels.
  static Expr padWeight(const Expr& w, int64_t o, int64_t i) {
    auto* t = inferType(w).as<TensorTypeNode>();
    const int64_t po = o - t->shape[0].value, pi = i - t->shape[1].value;
    if (po == 0 && pi == 0) return w;
    return makeCall("nn.pad", {w}, {{"pad_width", std::vector<int64_t>{0, po, 0, pi, 0, 0, 0, 0}}});
  }

  Expr rewrite(const Expr& original, const Expr& e) override {
    if (auto* g = e.as<TupleGetItemNode>()) return splitPart(*g, e);
    auto* c = e.as<CallNode>();
    if (!c || !c->op) return e;
    const std::string& op = c->op->name;
    if (op == "nn.conv2d") return conv(*c, e);
    if (op == "nn.conv2d_transpose") return m_feedsPlain.count(original.as<CallNode>()) ? e : convTranspose(*c, e);
    if (op == "nn.depth_to_space") return depthToSpace(*c, e);
    if (op == "nn.dense") return dense(*c, e);
    if (op == "layout_transform") return cancel(*c, e);
    if (c->op->pattern == OpPattern::ElemWise && c->args.size() == 1) {
      std::optional<Blocked> b = asBlocked(c->args[0]);
      if (!b || (b->isPadded() && !keepsPaddingFinite(op))) return e;
      return toPlain(withArgs(*c, {b->src}), b->layout, b->channels);
    }
    if (op == "nn.bias_add") return biasAdd(*c, e);
    if (op == "qnn.lookup") {  // a table per element: any layout (padding channels stay finite)
      std::optional<Blocked> b = asBlocked(c->args[0]);
      if (!b) return e;
      return toPlain(withArgs(*c, {b->src, c->args[1]}), b->layout, b->channels);
    }
    if (c->op->findAttr("layout") && c->args.size() == 1) { // pools
      std::optional<Blocked> b = asBlocked(c->args[0]);
      if (!b || c->attrs.getString("layout") != "NCHW") return e;
      Attrs attrs = c->attrs;
      attrs.set("layout", b->layout);
      return toPlain(makeCall(c->op, {b->src}, attrs, c->name), b->layout, b->channels);
    }
    if (op == "concatenate") return concat(*c, e);
    if (op == "strided_slice") {
      Expr r = spatialSlice(*c, e);
      return r.same_as(e) ? channelSlice(*c, e) : r;
    }
    if (op == "nn.pad") return spatialPad(*c, e);
    if (op == "reshape") return shuffle(*c, e);
    if (op == "mean") return spatialMean(*c, e);
    if (c->op->pattern == OpPattern::Broadcast && c->args.size() == 2 && op != "nn.bias_add")
      return binary(*c, e);
    return e;
  }

  /// A ConvTranspose whose kernel is its stride, without padding (a UNet's or FPN head's 2x2
  /// stride-2 upsampling): every output takes one tap, so it is a 1x1 conv to s*s*O channels
  /// (weight rows (dy, dx, o)) and a depth_to_space (DCR), both blocked when O is a multiple of
  /// the block. The NCHW ConvTranspose read a col buffer through a two-plane gather per output
  /// vector, and its NCHW output left the blocked layout (UNet: 7.5 of 77 ms at one thread).
  Expr convTranspose(const CallNode& c, const Expr& e) {
    if (!transposeAsConv(c)) return e;
    const std::vector<int64_t> ws = inferType(c.args[1]).as<TensorTypeNode>()->staticShape();
    const int64_t s = ws[2], in = ws[0], out = ws[1];
    // w[i, o, dy, dx] -> w1[(dy * s + dx) * O + o, i, 0, 0]
    Expr w = makeCall("transpose", {c.args[1]}, {{"axes", std::vector<int64_t>{2, 3, 1, 0}}});
    w = makeCall("reshape", {w}, {{"newshape", std::vector<int64_t>{s * s * out, in, 1, 1}}});
    Expr y = makeCall("nn.conv2d", {c.args[0], w}, {}, c.name);
    inferType(y);
    y = conv(*y.as<CallNode>(), y);
    Expr d = makeCall("nn.depth_to_space", {y}, {{"block_size", s}, {"mode", std::string("DCR")}});
    inferType(d);
    return depthToSpace(*d.as<CallNode>(), d);
  }

  /// Whether convTranspose takes `c`: kernel = stride, no padding, dilation or output padding,
  /// one group, output channels a multiple of the block.
  bool transposeAsConv(const CallNode& c) const {
    if (!c.op || c.op->name != "nn.conv2d_transpose") return false;
    auto* dt = inferType(c.args[0]).as<TensorTypeNode>();
    auto* wt = inferType(c.args[1]).as<TensorTypeNode>();
    if (!dt || !wt || dt->ndim() != 4 || !dt->shape[1].isStatic() || !wt->isStatic() || wt->ndim() != 4) return false;
    const std::vector<int64_t> ws = wt->staticShape();
    const int64_t s = ws[2];
    return c.attrs.getInt("groups") == 1 && ws[3] == s && s >= 2 &&
           c.attrs.getInts("strides") == std::vector<int64_t>{s, s} &&
           c.attrs.getInts("padding") == std::vector<int64_t>{0, 0, 0, 0} &&
           c.attrs.getInts("dilation") == std::vector<int64_t>{1, 1} &&
           c.attrs.getInts("output_padding") == std::vector<int64_t>{0, 0} && ws[0] == dt->shape[1].value &&
           ws[1] % m_block == 0 && channelBlock(ws[0], m_block) > 1;
  }

public:
  /// Marks the ConvTransposes whose result, through elementwise ops, feeds a ConvTranspose that
  /// stays NCHW (an FPN head's 16 -> 1 after its 16 -> 16): there the blocked depth_to_space
  /// would end in a layout transform back to NCHW, slower than the NCHW kernel (0.29 against
  /// 0.24 ms).
  void markTransposesFeedingPlain(const Expr& root) {
    std::map<const ExprNode*, std::vector<const CallNode*>> users;
    for (const Expr& e : postOrder(root))
      if (auto* c = e.as<CallNode>())
        for (const Expr& a : c->args) users[a.get()].push_back(c);
    for (const Expr& e : postOrder(root)) {
      auto* c = e.as<CallNode>();
      if (!c || !transposeAsConv(*c)) continue;
      std::vector<const ExprNode*> todo{e.get()};
      while (!todo.empty() && !m_feedsPlain.count(c)) {
        const ExprNode* n = todo.back();
        todo.pop_back();
        for (const CallNode* u : users[n]) {
          const bool elementwise = u->op && (u->op->pattern == OpPattern::ElemWise || u->op->pattern == OpPattern::Broadcast);
          if (elementwise)
            todo.push_back(u);
          else if (u->op && u->op->name == "nn.conv2d_transpose" && !transposeAsConv(*u))
            m_feedsPlain.insert(c);
        }
      }
    }
  }

private:
  std::set<const CallNode*> m_feedsPlain;

  /// depth_to_space (DCR) of a blocked tensor without padding channels, whose output channels
  /// fill whole blocks: in the same layout, a copy of whole channel vectors.
  Expr depthToSpace(const CallNode& c, const Expr& e) {
    std::optional<Blocked> b = asBlocked(c.args[0]);
    auto* out = inferType(e).as<TensorTypeNode>();
    if (!b || b->isPadded() || c.attrs.getString("mode") != "DCR" || c.attrs.getString("layout") != "NCHW" || !out ||
        out->ndim() != 4 || !out->shape[1].isStatic() || out->shape[1].value % blockOf(b->layout) != 0)
      return e;
    Attrs attrs = c.attrs;
    attrs.set("layout", b->layout);
    return toPlain(makeCall(c.op, {b->src}, attrs, c.name), b->layout, out->shape[1].value);
  }

  Expr conv(const CallNode& c, const Expr& e) {
    if (c.attrs.getString("data_layout") != "NCHW") return e;
    auto* dt = inferType(c.args[0]).as<TensorTypeNode>();
    auto* wt = inferType(c.args[1]).as<TensorTypeNode>();
    // The batch and the image size may be symbolic (a dynamic model): the blocks are channels.
    if (!dt || !wt || dt->ndim() != 4 || !dt->shape[1].isStatic() || !wt->isStatic()) return e;
    const int64_t groups = c.attrs.getInt("groups");
    const int64_t channels = dt->shape[1].value, outChannels = wt->shape[0].value;
    if (groups != 1 && !(groups == channels && outChannels == channels && wt->shape[1].value == 1))
      return groupedConv(c, e, *dt, *wt);
    if (groups != 1) {
      // A depthwise conv (one input and one output channel per group) blocks its channels:
      // data NCHW{k}c, kernel OIHW1i{k}o; padding channels are groups of their own.
      if (groups != channels || outChannels != channels || wt->shape[1].value != 1) return e;
      const int64_t k = channelBlock(channels, m_block);
      if (k == 1) return e;
      Expr x = toBlocked(c.args[0], k);
      const int64_t padded = inferType(x).as<TensorTypeNode>()->shape[1].value * k;
      Attrs attrs = c.attrs;
      std::string kernel = "OIHW1i" + std::to_string(k) + "o";
      attrs.set("data_layout", dataLayout(k));
      attrs.set("kernel_layout", kernel);
      attrs.set("groups", padded);
      Expr y = makeCall(c.op, {x, transform(padWeight(c.args[1], padded, 1), "OIHW", kernel)}, attrs, c.name);
      return toPlain(y, dataLayout(k), channels);
    }
    const int64_t ib = channelBlock(channels, m_block);
    int64_t ob = channelBlock(outChannels, m_block);
    // A conv to one to three channels (a segmentation head's class map, an image generator's
    // RGB output) from a block or more of channels: its output block is padded to a full vector
    // of zero filters (16 / O times its arithmetic, in register tiles of full vectors) rather
    // than the input going back to NCHW for a scalar-lane conv (a UNet's 32 -> 1 head: a 0.59
    // ms layout transform and 1.08 ms at 8 GFLOP/s at 256x256, one thread) or a 3-lane block
    // with no vector schedule (a style-transfer net's 9x9 32 -> 3 conv at 224x224: 1213 ms at
    // 0.6 GFLOP/s, the whole model 1373 ms; 16.9 ms and 60 ms padded).
    if (ob < 4 && channels >= m_block) ob = m_block;
    // One output channel has no block otherwise: such a conv stays NCHW. One input channel (a
    // grayscale image, an audio waveform) reads NCHW1c, which is NCHW: the output still takes full
    // vector blocks (an NCHW conv vectorises over the output width, gathering a strided input).
    if (ob == 1) return e;
    Expr x = ib > 1 ? toBlocked(c.args[0], ib) : transform(c.args[0], "NCHW", "NCHW1c");
    const int64_t paddedIn = inferType(x).as<TensorTypeNode>()->shape[1].value * ib;
    const int64_t paddedOut = roundUp(outChannels, ob);
    std::string kernel = "OIHW" + std::to_string(ib) + "i" + std::to_string(ob) + "o";
    Attrs attrs = c.attrs;
    attrs.set("data_layout", ib > 1 ? dataLayout(ib) : "NCHW1c");
    attrs.set("kernel_layout", kernel);
    Expr w = transform(padWeight(c.args[1], paddedOut, paddedIn), "OIHW", kernel);
    Expr y = makeCall(c.op, {x, w}, attrs, c.name);
    return toPlain(y, dataLayout(ob), outChannels);
  }

  /// A grouped conv (1 < groups < channels, as RegNet's and ResNeXt's) in NCHW16c:
  /// - groups of whole blocks (16, 32, ... channels in and out): each output block reads the input
  ///   blocks of its group;
  /// - groups narrower than a block that divide it (4 or 8 channels, as many in as out): regrouped
  ///   into groups of one block, with a block-diagonal weight (zero outside the original groups:
  ///   16 / width times the arithmetic, in full vector lanes instead of scalar code); channels
  ///   that do not fill the last block are padded (groups of zero weights).
  /// Other grouped convs stay NCHW.
  Expr groupedConv(const CallNode& c, const Expr& e, const TensorTypeNode& dt, const TensorTypeNode& wt) {
    const int64_t groups = c.attrs.getInt("groups"), channels = dt.shape[1].value, outChannels = wt.shape[0].value;
    const int64_t gi = channels / groups, go = outChannels / groups, k = m_block;
    if (wt.dtype != DataType::Float(32)) return e;
    Expr w = c.args[1];
    int64_t newGroups = groups, paddedIn = channels;
    if (gi % k == 0 && go % k == 0) {
      // whole blocks: the weight as it is
    } else if (gi == go && gi < k && k % gi == 0 && c.args[1].as<ConstantNode>()) {
      const int64_t padded = roundUp(channels, k);
      newGroups = padded / k;
      paddedIn = padded;
      // W'[o, j] = W[o, j % gi] where input j of o's block lies in o's group, else 0.
      w = padWeight(w, padded, gi);
      w = makeCall("tile", {w}, {{"reps", std::vector<int64_t>{1, k / gi, 1, 1}}});
      runtime::NDArray mask = runtime::NDArray::empty({padded, k, 1, 1}, runtime::DType::f32());
      for (int64_t o = 0; o < padded; ++o)
        for (int64_t j = 0; j < k; ++j)
          mask.as<float>()[o * k + j] = (j / gi == (o % k) / go && o < outChannels) ? 1.f : 0.f;
      w = makeCall("multiply", {w, makeConstant(mask)});
    } else {
      return e;
    }
    Expr x = toBlocked(c.args[0], k);
    if (inferType(x).as<TensorTypeNode>()->shape[1].value * k != paddedIn) return e;
    std::string kernel = "OIHW" + std::to_string(k) + "i" + std::to_string(k) + "o";
    Attrs attrs = c.attrs;
    attrs.set("data_layout", dataLayout(k));
    attrs.set("kernel_layout", kernel);
    attrs.set("groups", newGroups);
    Expr y = makeCall(c.op, {x, transform(w, "OIHW", kernel)}, attrs, c.name);
    return toPlain(y, dataLayout(k), outChannels);
  }

  /// dense(x, W) with a constant weight W (N, K) -> matmul(x, transpose(W)): the weight, laid
  /// out (K, N) once by FoldConstant, gives the output columns contiguous operands, so they run
  /// in vector lanes (TVM's dense_pack does the same with an (N/16, K, 16) weight).
  Expr dense(const CallNode& c, const Expr& e) {
    if (!c.args[1].as<ConstantNode>()) return e;
    auto* wt = inferType(c.args[1]).as<TensorTypeNode>();
    auto* xt = inferType(c.args[0]).as<TensorTypeNode>();
    if (!wt || !xt || wt->ndim() != 2 || xt->ndim() < 2 || !wt->isStatic()) return e;
    Expr t = makeCall("transpose", {c.args[1]}, {{"axes", std::vector<int64_t>{1, 0}}});
    return makeCall("nn.matmul", {c.args[0], t}, {}, c.name);
  }

  Expr cancel(const CallNode& c, const Expr& e) {
    auto* inner = c.args[0].as<CallNode>();
    if (!inner || !inner->op || inner->op->name != "layout_transform") return e;
    const std::string& from = inner->attrs.getString("src_layout");
    const std::string& to = c.attrs.getString("dst_layout");
    if (parseLayout(from)->kernel != parseLayout(to)->kernel) return e;
    return transform(inner->args[0], from, to);
  }

  /// A per-channel operand (C, 1, 1) / (1, C, 1, 1), scalar or 1-element, re-shaped for NCHW{k}c
  /// with `padded` channels (the padding channels get `padValue`).
  Expr channelOperand(const Expr& other, int64_t channels, int64_t k, int64_t padded, double padValue) {
    auto* t = inferType(other).as<TensorTypeNode>();
    if (!t || !t->isStatic()) return {};
    std::vector<int64_t> s = t->staticShape();
    if (t->numel() == 1 && s.size() <= 1) return other;
    while (s.size() == 4 && s[0] == 1)
      s.erase(s.begin());
    if (s.size() != 3 || s[0] != channels || s[1] != 1 || s[2] != 1) return {};
    Expr v = other;
    if (padded != channels) {
      v = makeCall("reshape", {other}, {{"newshape", std::vector<int64_t>{channels}}});
      v = makeCall("nn.pad", {v}, {{"pad_width", std::vector<int64_t>{0, padded - channels}}, {"pad_value", padValue}});
    }
    return makeCall("reshape", {v}, {{"newshape", std::vector<int64_t>{padded / k, 1, 1, k}}});
  }

  Expr biasAdd(const CallNode& c, const Expr& e) {
    std::optional<Blocked> b = asBlocked(c.args[0]);
    if (!b || c.attrs.getInt("axis") != 1) return e;
    Expr bias = makeCall("reshape", {c.args[1]}, {{"newshape", std::vector<int64_t>{b->channels, 1, 1}}});
    bias = channelOperand(bias, b->channels, blockOf(b->layout), b->padded, 0.0);
    if (!bias.defined()) return e;
    return toPlain(makeCall("add", {b->src, bias}), b->layout, b->channels);
  }

  /// Concatenation along channels of inputs that all come from the same blocked layout; only the
  /// last may carry padding channels (they stay at the end).
  Expr concat(const CallNode& c, const Expr& e) {
    auto* out = inferType(e).as<TensorTypeNode>();
    if (!out || out->ndim() != 4 || !out->shape[1].isStatic()) return e;
    int64_t axis = c.attrs.getInt("axis");
    if (axis != 1 && axis != -3) return e;
    // The inputs' blocked layout; an NCHW input among blocked ones (a UNet's upsampling
    // ConvTranspose, which stays NCHW, beside its skip connection) is blocked too, rather than
    // the blocked ones leaving their layout and the result coming back to it (6.3 ms of a UNet's
    // 88 at one thread were such a concat at 256x256), when the blocked inputs hold at least as
    // many channels as the NCHW ones.
    std::string first;
    int64_t blockedChannelCount = 0, plainChannelCount = 0;
    for (const Expr& a : c.args)
      if (std::optional<Blocked> b = asBlocked(a)) {
        if (first.empty()) first = b->layout;
        blockedChannelCount += b->channels;
      } else {
        plainChannelCount += std::max<int64_t>(channelsOf(a), 0);
      }
    if (first.empty() || blockedChannelCount < plainChannelCount) return e;
    std::vector<Expr> blocked;
    bool padded = false;
    std::vector<int64_t> channels;
    for (size_t i = 0; i < c.args.size(); ++i) {
      std::optional<Blocked> b = asBlocked(c.args[i]);
      if (!b) {
        const int64_t n = channelsOf(c.args[i]);
        if (n < 1) return e;
        Blocked p;
        p.src = toBlocked(c.args[i], blockOf(first));
        p.layout = first;
        p.channels = n;
        p.padded = roundUp(n, blockOf(first));
        b = p;
      }
      if (b->layout != first) return e;
      padded = padded || (b->isPadded() && i + 1 != c.args.size());
      blocked.push_back(b->src);
      channels.push_back(b->channels);
    }
    // Padding channels inside the result (58 + 58 channels in blocks of 16, as ShuffleNet's):
    // one channel_shuffle that packs the inputs' channels, still blocked.
    if (padded) return toPlain(shuffleCall(blocked, channels, 1, 0, out->shape[1].value, first), first,
                               out->shape[1].value);
    return toPlain(makeCall(c.op, blocked, {{"axis", int64_t(1)}}, c.name), first, out->shape[1].value);
  }

  static Expr shuffleCall(const std::vector<Expr>& inputs, const std::vector<int64_t>& channels, int64_t groups,
                          int64_t begin, int64_t count, const std::string& layout) {
    return makeCall("channel_shuffle", inputs,
                    {{"channels", channels}, {"groups", groups}, {"begin", begin}, {"count", count},
                     {"layout", layout}});
  }

  /// The inputs and their channel counts that blocked tensor `b` concatenates: those of a
  /// channel_shuffle that only concatenates, or of a blocked concatenate without padding; else
  /// `b` itself.
  static std::pair<std::vector<Expr>, std::vector<int64_t>> concatParts(const Blocked& b) {
    if (auto* s = b.src.as<CallNode>(); s && s->op) {
      if (s->op->name == "channel_shuffle" && s->attrs.getInt("groups") == 1 && s->attrs.getInt("begin") == 0) {
        const std::vector<int64_t>& ch = s->attrs.getInts("channels");
        int64_t total = 0;
        for (int64_t n : ch) total += n;
        if (total == s->attrs.getInt("count") && total == b.channels) return {s->args, ch};
      }
      if (s->op->name == "concatenate" && !b.isPadded()) {
        std::vector<int64_t> ch;
        for (const Expr& a : s->args) {
          auto* t = inferType(a).as<TensorTypeNode>();
          if (!t || t->ndim() != 5 || !t->isStatic()) return {{b.src}, {b.channels}};
          ch.push_back(t->shape[1].value * t->shape[4].value);
        }
        return {s->args, ch};
      }
    }
    return {{b.src}, {b.channels}};
  }

  /// A slice of channels [begin, end) with stride 1 of a blocked tensor: one channel_shuffle that
  /// copies them into a blocked tensor of their own (a slice of a shuffle or of a concatenation
  /// reads their inputs directly).
  /// A slice of rows and columns only (axes 2 and 3 of NCHW, unit strides) of a blocked tensor:
  /// the same slice of its blocked form (NCHW{k}c keeps H and W as axes 2 and 3).
  Expr spatialSlice(const CallNode& c, const Expr& e) {
    const auto& ax = c.attrs.getInts("axes");
    const auto& st = c.attrs.getInts("strides");
    if (ax.empty()) return e;
    for (int64_t a : ax)
      if (a != 2 && a != 3 && a != -2 && a != -1) return e;
    for (int64_t v : st)
      if (v != 1) return e;
    std::optional<Blocked> b = asBlocked(c.args[0]);
    if (!b) return e;
    std::vector<int64_t> axes;
    for (int64_t a : ax) axes.push_back(a < 0 ? a + 4 : a);
    Attrs attrs = c.attrs;
    attrs.set("axes", axes);
    return toPlain(makeCall(c.op, {b->src}, attrs, c.name), b->layout, b->channels);
  }

  /// The mean over rows and columns of a blocked tensor (`x.mean([2, 3])`: MnasNet's and
  /// ShuffleNet-v2's heads) is its blocked global average pool, whose (N, C/k, 1, 1, k) result
  /// goes back to NCHW (a transform of N x C elements) and, without keepdims, to (N, C). In NCHW
  /// the whole feature map went through a layout transform first, then a scalar sum per channel
  /// (MnasNet's 1280 x 7 x 7 head: 0.022 + 0.015 ms on one core).
  Expr spatialMean(const CallNode& c, const Expr& e) {
    std::optional<Blocked> b = asBlocked(c.args[0]);
    auto* out = inferType(e).as<TensorTypeNode>();
    if (!b || !out) return e;
    std::vector<int64_t> axes = c.attrs.getInts("axis");
    for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
    std::sort(axes.begin(), axes.end());
    if (axes != std::vector<int64_t>{2, 3}) return e;
    Expr pooled = makeCall("nn.global_avg_pool2d", {b->src}, {{"layout", b->layout}}, c.name);
    Expr plain = toPlain(pooled, b->layout, b->channels);
    if (c.attrs.getInt("keepdims") != 0) return plain;
    std::vector<int64_t> shape;
    for (const Dim& d : out->shape) {
      if (!d.isStatic()) return e;
      shape.push_back(d.value);
    }
    return makeCall("reshape", {plain}, {{"newshape", shape}});
  }

  /// A zero pad of rows and columns only of a blocked tensor: the same pad of its blocked form
  /// (its padding channels, finite, stay finite).
  Expr spatialPad(const CallNode& c, const Expr& e) {
    const auto& pw = c.attrs.getInts("pad_width");
    if (pw.size() != 8 || pw[0] || pw[1] || pw[2] || pw[3] || c.attrs.getString("pad_mode") != "constant" ||
        c.attrs.getFloat("pad_value") != 0.0)
      return e;
    std::optional<Blocked> b = asBlocked(c.args[0]);
    if (!b) return e;
    Attrs attrs = c.attrs;
    attrs.set("pad_width", std::vector<int64_t>{0, 0, 0, 0, pw[4], pw[5], pw[6], pw[7], 0, 0});
    return toPlain(makeCall(c.op, {b->src}, attrs, c.name), b->layout, b->channels);
  }

  Expr channelSlice(const CallNode& c, const Expr& e) {
    const auto& ax = c.attrs.getInts("axes");
    const auto& st = c.attrs.getInts("strides");
    const auto& bg = c.attrs.getInts("begin");
    const auto& en = c.attrs.getInts("end");
    if (ax.size() != 1 || (ax[0] != 1 && ax[0] != -3) || bg.size() != 1 || en.size() != 1 ||
        (!st.empty() && st != std::vector<int64_t>{1}))
      return e;
    std::optional<Blocked> b = asBlocked(c.args[0]);
    auto* out = inferType(e).as<TensorTypeNode>();
    if (!b || !out || out->ndim() != 4 || !out->shape[1].isStatic() || out->shape[1].value < 1) return e;
    int64_t begin = bg[0] < 0 ? bg[0] + b->channels : bg[0];
    begin = std::clamp<int64_t>(begin, 0, b->channels);
    return blockedChannels(*b, begin, out->shape[1].value, e);
  }

  /// Channels [begin, begin + count) of blocked tensor `b`, as a channel_shuffle in its layout
  /// (of the concatenation's inputs when it concatenates); `e` where they are not all there.
  Expr blockedChannels(const Blocked& b, int64_t begin, int64_t count, const Expr& e) {
    if (begin < 0 || count < 1 || begin + count > b.channels) return e;
    Expr r;
    if (auto* s = b.src.as<CallNode>(); s && s->op && s->op->name == "channel_shuffle")
      r = shuffleCall(s->args, s->attrs.getInts("channels"), s->attrs.getInt("groups"),
                      s->attrs.getInt("begin") + begin, count, b.layout);
    else {
      auto [inputs, channels] = concatParts(b);
      r = shuffleCall(inputs, channels, 1, begin, count, b.layout);
    }
    return toPlain(r, b.layout, count);
  }

  /// A part of a split along the channels of a blocked tensor (ONNX Split, YOLO's C2f blocks,
  /// `x.chunk(2, dim=1)`): a channel slice in the blocked layout, like strided_slice's. The
  /// split itself is then read by nobody and drops out of the graph.
  Expr splitPart(const TupleGetItemNode& g, const Expr& e) {
    auto* s = g.tuple.as<CallNode>();
    if (!s || !s->op || s->op->name != "split" || s->args.size() != 1) return e;
    const int64_t axis = s->attrs.getInt("axis");
    const auto& sizes = s->attrs.getInts("sections");
    if ((axis != 1 && axis != -3) || g.index < 0 || size_t(g.index) >= sizes.size()) return e;
    std::optional<Blocked> b = asBlocked(s->args[0]);
    auto* in = inferType(s->args[0]).as<TensorTypeNode>();
    if (!b || !in || in->ndim() != 4) return e;
    int64_t begin = 0;
    for (int k = 0; k < g.index; ++k) begin += sizes[size_t(k)];
    return blockedChannels(*b, begin, sizes[size_t(g.index)], e);
  }

  /// A channel shuffle, reshape [N, C, H, W] of transpose(reshape [N, g, C/g, H, W], axes 0 2 1 3
  /// 4), of a blocked tensor: one channel_shuffle in its layout (of the concatenation's inputs when
  /// the tensor concatenates).
  /// The batch may be symbolic (a model exported with a dynamic batch), the same on both sides.
  Expr shuffle(const CallNode& c, const Expr& e) {
    auto* out = inferType(e).as<TensorTypeNode>();
    auto* t = c.args[0].as<CallNode>();
    auto staticFrom1 = [](const TensorTypeNode& x) {
      for (size_t d = 1; d < x.ndim(); ++d)
        if (!x.shape[d].isStatic()) return false;
      return true;
    };
    if (!out || out->ndim() != 4 || !staticFrom1(*out) || !t || !t->op || t->op->name != "transpose" ||
        t->attrs.getInts("axes") != std::vector<int64_t>{0, 2, 1, 3, 4})
      return e;
    auto* r = t->args[0].as<CallNode>();
    if (!r || !r->op || r->op->name != "reshape") return e;
    auto* five = inferType(t->args[0]).as<TensorTypeNode>();
    std::optional<Blocked> b = asBlocked(r->args[0]);
    if (!b || !five || five->ndim() != 5 || !staticFrom1(*five) || !(five->shape[0] == out->shape[0])) return e;
    std::vector<int64_t> s5, s4;
    for (const Dim& d : five->shape) s5.push_back(d.value);
    for (const Dim& d : out->shape) s4.push_back(d.value);
    if (s5[1] * s5[2] != s4[1] || s5[3] != s4[2] || s5[4] != s4[3] || s4[1] != b->channels)
      return e;
    auto [inputs, channels] = concatParts(*b);
    return toPlain(shuffleCall(inputs, channels, s5[1], 0, s4[1], b->layout), b->layout, s4[1]);
  }

  /// Whether blocked operand `t` (logical type) broadcasts to `out` along H and W only.
  static bool broadcastsSpatially(const Type& t, const TensorTypeNode& out) {
    auto* a = t.as<TensorTypeNode>();
    if (!a || a->ndim() != 4 || !a->shape[1].isStatic()) return false;
    for (size_t d = 0; d < 4; ++d) {
      const Dim& x = a->shape[d];
      if (!dimsProvablyEqual(x, out.shape[d]) && !(d != 1 && x.isStatic() && x.value == 1)) return false;
    }
    return true;
  }

  Expr binary(const CallNode& c, const Expr& e) {
    auto* out = inferType(e).as<TensorTypeNode>();
    if (!out || out->ndim() != 4 || !out->shape[1].isStatic()) return e;
    const std::string& op = c.op->name;
    std::optional<Blocked> a = asBlocked(c.args[0]);
    std::optional<Blocked> b = asBlocked(c.args[1]);
    if (a && b) {
      // Same layout; each side the output's shape or broadcast along H and W (a squeeze-excite
      // scale); padding channels only through ops that keep them finite.
      if (a->layout != b->layout || a->padded != b->padded || a->channels != b->channels) return e;
      if ((a->isPadded() && !keepsPaddingFinite(op)) || !broadcastsSpatially(inferType(c.args[0]), *out) ||
          !broadcastsSpatially(inferType(c.args[1]), *out))
        return e;
      return toPlain(withArgs(c, {a->src, b->src}), a->layout, a->channels);
    }
    const std::optional<Blocked>& blocked = a ? a : b;
    if (!blocked) return e;
    int64_t channels = out->shape[1].value;
    if (!typeEqual(inferType(a ? c.args[0] : c.args[1]), Type(out)))
      return e; // blocked side must not broadcast
    // Padding channels stay finite through +, -, *, max, min, and a division by a constant
    // whose padding channels are 1.
    double padValue = 0.0;
    if (blocked->isPadded() && !keepsPaddingFinite(op)) {
      if (op != "divide" || !a) return e;
      padValue = 1.0;
    }
    Expr other = channelOperand(a ? c.args[1] : c.args[0], channels, blockOf(blocked->layout), blocked->padded, padValue);
    if (!other.defined()) return e;
    Call r = a ? withArgs(c, {blocked->src, other}) : withArgs(c, {other, blocked->src});
    return toPlain(r, blocked->layout, blocked->channels);
  }
};

} // namespace

Expr convertLayout(const Expr& e, int64_t block) {
  inferType(e);
  LayoutConverter converter(block);
  converter.markTransposesFeedingPlain(e);
  Expr out = converter.mutate(e);
  inferType(out);
  return out;
}

Module convertLayout(const Module& m, int64_t block) {
  return mapFunctions(m, [block](const Expr& e) { return convertLayout(e, block); });
}

} // namespace loom::graph
