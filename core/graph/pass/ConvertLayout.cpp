// ConvertLayout: NCHW conv2d -> NCHW{k}c with layout_transform sinking and cancellation.
#include "core/graph/pass/ConvertLayout.h"

#include "core/graph/Layout.h"
#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

namespace {

int64_t largestDivisor(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

std::string dataLayout(int64_t block) {
  return block > 1 ? "NCHW" + std::to_string(block) + "c" : "NCHW";
}

Expr transform(const Expr& x, const std::string& from, const std::string& to) {
  if (from == to) return x;
  return makeCall("layout_transform", {x}, {{"src_layout", from}, {"dst_layout", to}});
}

/// The blocked source and the layout when `e` is layout_transform(y, NCHW{k}c -> NCHW).
const CallNode* fromBlocked(const Expr& e, std::string* layout) {
  auto* c = e.as<CallNode>();
  if (!c || !c->op || c->op->name != "layout_transform" ||
      c->attrs.getString("dst_layout") != "NCHW")
    return nullptr;
  *layout = c->attrs.getString("src_layout");
  return *layout == "NCHW" ? nullptr : c;
}

int64_t blockOf(const std::string& layout) {
  return parseLayout(layout)->blockA;
}

class LayoutConverter : public ExprMutator {
public:
  explicit LayoutConverter(int64_t block) : m_block(block) {}

private:
  int64_t m_block;

  /// `e` (NCHW) in layout NCHW{k}c, reusing a transform that just left that layout.
  Expr toBlocked(const Expr& e, int64_t k) {
    std::string layout;
    if (const CallNode* lt = fromBlocked(e, &layout))
      return transform(lt->args[0], layout, dataLayout(k));
    return transform(e, "NCHW", dataLayout(k));
  }

  Expr rewrite(const Expr&, const Expr& e) override {
    auto* c = e.as<CallNode>();
    if (!c || !c->op) return e;
    const std::string& op = c->op->name;
    if (op == "nn.conv2d") return conv(*c, e);
    if (op == "nn.dense") return dense(*c, e);
    if (op == "layout_transform") return cancel(*c, e);
    if (c->op->pattern == OpPattern::ElemWise && c->args.size() == 1) {
      std::string layout;
      if (const CallNode* lt = fromBlocked(c->args[0], &layout))
        return transform(withArgs(*c, {lt->args[0]}), layout, "NCHW");
      return e;
    }
    if (op == "nn.bias_add") return biasAdd(*c, e);
    if (c->op->findAttr("layout") && c->args.size() == 1) { // pools
      std::string layout;
      const CallNode* lt = fromBlocked(c->args[0], &layout);
      if (!lt || c->attrs.getString("layout") != "NCHW") return e;
      Attrs attrs = c->attrs;
      attrs.set("layout", layout);
      return transform(makeCall(c->op, {lt->args[0]}, attrs, c->name), layout, "NCHW");
    }
    if (op == "concatenate") return concat(*c, e);
    if (c->op->pattern == OpPattern::Broadcast && c->args.size() == 2 && op != "nn.bias_add")
      return binary(*c, e);
    return e;
  }

  Expr conv(const CallNode& c, const Expr& e) {
    if (c.attrs.getString("data_layout") != "NCHW") return e;
    auto* dt = inferType(c.args[0]).as<TensorTypeNode>();
    auto* wt = inferType(c.args[1]).as<TensorTypeNode>();
    if (!dt || !wt || !dt->isStatic() || !wt->isStatic()) return e;
    int64_t groups = c.attrs.getInt("groups");
    if (groups != 1) {
      // A depthwise conv (one input and one output channel per group) blocks its channels:
      // data NCHW{k}c, kernel OIHW1i{k}o.
      int64_t channels = dt->shape[1].value;
      if (groups != channels || wt->shape[0].value != channels || wt->shape[1].value != 1) return e;
      int64_t k = largestDivisor(channels, m_block);
      if (k == 1) return e;
      Attrs attrs = c.attrs;
      std::string kernel = "OIHW1i" + std::to_string(k) + "o";
      attrs.set("data_layout", dataLayout(k));
      attrs.set("kernel_layout", kernel);
      Expr y = makeCall(c.op, {toBlocked(c.args[0], k), transform(c.args[1], "OIHW", kernel)}, attrs, c.name);
      return transform(y, dataLayout(k), "NCHW");
    }
    int64_t ib = largestDivisor(dt->shape[1].value, m_block),
            ob = largestDivisor(wt->shape[0].value, m_block);
    // A prime channel count above the block (or 1) has no block: such a conv stays NCHW.
    if (ob == 1 || ib == 1) return e;
    std::string kernel = "OIHW" + std::to_string(ib) + "i" + std::to_string(ob) + "o";
    Attrs attrs = c.attrs;
    attrs.set("data_layout", dataLayout(ib));
    attrs.set("kernel_layout", kernel);
    Expr w = transform(c.args[1], "OIHW", kernel);
    Expr y = makeCall(c.op, {toBlocked(c.args[0], ib), w}, attrs, c.name);
    return transform(y, dataLayout(ob), "NCHW");
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

  /// A per-channel operand (C, 1, 1) / (1, C, 1, 1), scalar or 1-element, re-shaped for NCHW{k}c.
  Expr channelOperand(const Expr& other, int64_t channels, int64_t k) {
    auto* t = inferType(other).as<TensorTypeNode>();
    if (!t || !t->isStatic()) return {};
    std::vector<int64_t> s = t->staticShape();
    if (t->numel() == 1 && s.size() <= 1) return other;
    while (s.size() == 4 && s[0] == 1)
      s.erase(s.begin());
    if (s.size() == 3 && s[0] == channels && s[1] == 1 && s[2] == 1)
      return makeCall("reshape", {other},
                      {{"newshape", std::vector<int64_t>{channels / k, 1, 1, k}}});
    return {};
  }

  Expr biasAdd(const CallNode& c, const Expr& e) {
    std::string layout;
    const CallNode* lt = fromBlocked(c.args[0], &layout);
    if (!lt || c.attrs.getInt("axis") != 1) return e;
    int64_t k = blockOf(layout);
    int64_t channels = inferType(c.args[1]).as<TensorTypeNode>()->shape[0].value;
    Expr b = makeCall("reshape", {c.args[1]},
                      {{"newshape", std::vector<int64_t>{channels / k, 1, 1, k}}});
    return transform(makeCall("add", {lt->args[0], b}), layout, "NCHW");
  }

  /// Concatenation along channels of inputs that all come from the same blocked layout.
  Expr concat(const CallNode& c, const Expr& e) {
    auto* out = inferType(e).as<TensorTypeNode>();
    if (!out || out->ndim() != 4) return e;
    int64_t axis = c.attrs.getInt("axis");
    if (axis != 1 && axis != -3) return e;
    std::string first;
    std::vector<Expr> blocked;
    for (const Expr& a : c.args) {
      std::string layout;
      const CallNode* lt = fromBlocked(a, &layout);
      if (!lt || (!first.empty() && layout != first)) return e;
      first = layout;
      blocked.push_back(lt->args[0]);
    }
    return transform(makeCall(c.op, blocked, {{"axis", int64_t(1)}}, c.name), first, "NCHW");
  }

  Expr binary(const CallNode& c, const Expr& e) {
    auto* out = inferType(e).as<TensorTypeNode>();
    if (!out || out->ndim() != 4 || !out->isStatic()) return e;
    std::string la, lb;
    const CallNode* a = fromBlocked(c.args[0], &la);
    const CallNode* b = fromBlocked(c.args[1], &lb);
    if (a && b) {
      if (la != lb || !typeEqual(inferType(c.args[0]), inferType(c.args[1]))) return e;
      return transform(withArgs(c, {a->args[0], b->args[0]}), la, "NCHW");
    }
    const CallNode* blocked = a ? a : b;
    if (!blocked) return e;
    const std::string& layout = a ? la : lb;
    int64_t channels = out->shape[1].value;
    if (!typeEqual(inferType(a ? c.args[0] : c.args[1]), Type(out)))
      return e; // blocked side must not broadcast
    Expr other = channelOperand(a ? c.args[1] : c.args[0], channels, blockOf(layout));
    if (!other.defined()) return e;
    Call r = a ? withArgs(c, {blocked->args[0], other}) : withArgs(c, {other, blocked->args[0]});
    return transform(r, layout, "NCHW");
  }
};

} // namespace

Expr convertLayout(const Expr& e, int64_t block) {
  inferType(e);
  Expr out = LayoutConverter(block).mutate(e);
  inferType(out);
  return out;
}

Module convertLayout(const Module& m, int64_t block) {
  return mapFunctions(m, [block](const Expr& e) { return convertLayout(e, block); });
}

} // namespace loom::graph
