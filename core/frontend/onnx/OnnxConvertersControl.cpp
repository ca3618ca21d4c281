// ONNX control flow whose iterations and branches are known when the model is imported: Loop
// with a constant trip count (and a condition that folds to a constant each iteration), Scan
// (its length is a static dimension), and If with a constant condition (the taken branch only)
// or a data condition whose branches give outputs of one type (both branches, then `where`).
//
// Design: the body graph is inlined once per iteration at import (unrolled), the graph executor
// then sees ordinary ops, fuses across iterations and constant-folds what the iteration number
// makes constant (the Slice of test_loop11, the Range expansion). This fits the static executor
// with no new runtime machinery; the cost is graph size linear in the trip count, so unrolling
// stops at kMaxUnroll iterations with a typed error. Loops whose count depends on data need the
// dynamic executor (issue #18). Recurrences with a large trip count and a fixed cell (LSTM/GRU/
// RNN) use nn.recurrence's loop kernel instead (OnnxConvertersRecurrent.cpp).
#include <optional>

#include "core/arith/ExprText.h"
#include "core/frontend/onnx/OnnxContext.h"
#include "core/graph/pass/FoldConstant.h"
#include "core/tir/Op.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

constexpr int64_t kMaxUnroll = 1024;

const onnx::GraphProto& graphAttr(Context& c, const std::string& name) {
  const onnx::AttributeProto* a = c.attr(name);
  if (!a || !a->has_g()) c.fail("the graph attribute '" + name + "' is missing");
  return a->g();
}

/// Converts `body` in the current scope (outer values stay visible, as ONNX subgraphs capture
/// them) with its inputs bound to `inputs`; returns its outputs. Names the body defines are
/// restored afterwards, so the next iteration (or the outer graph) sees its own values.
Outs inlineGraph(Context& c, const onnx::GraphProto& body, const std::string& what, const Outs& inputs) {
  if (body.input_size() != int(inputs.size()))
    c.fail(what + " takes " + std::to_string(body.input_size()) + " inputs, given " + std::to_string(inputs.size()));
  auto& values = c.values();
  std::unordered_map<std::string, std::optional<Expr>> saved;
  auto bind = [&](const std::string& name, const Expr& e) {
    if (!saved.count(name)) {
      auto it = values.find(name);
      saved[name] = it == values.end() ? std::nullopt : std::optional<Expr>(it->second);
    }
    values[name] = e;
  };
  for (int i = 0; i < body.input_size(); ++i) bind(body.input(i).name(), inputs[size_t(i)]);
  for (const auto& init : body.initializer())
    bind(init.name(), graph::makeConstant(tensorFromProto(init, c.file() + ": " + what + " initializer '" + init.name() + "'"),
                                          init.name()));
  const onnx::NodeProto* outer = c.node;
  const auto& table = converters();
  for (const auto& n : body.node()) {
    auto it = table.find(converterKey(n));
    if (it == table.end()) c.fail(what + ": unsupported op " + converterKey(n) + " (node '" + n.name() + "')");
    c.node = &n;
    Outs outs;
    try {
      outs = it->second(c);
    } catch (const ImportError&) {
      throw;
    } catch (const Error& e) {
      c.fail(e.what());
    }
    for (int k = 0; k < n.output_size() && k < int(outs.size()); ++k)
      if (!n.output(k).empty()) bind(n.output(k), outs[size_t(k)]);
  }
  c.node = outer;
  Outs results;
  for (const auto& out : body.output()) {
    auto it = values.find(out.name());
    if (it == values.end()) c.fail(what + ": its output '" + out.name() + "' is never produced");
    results.push_back(it->second);
  }
  for (auto& [name, old] : saved) {
    if (old) values[name] = *old;
    else values.erase(name);
  }
  return results;
}

/// The boolean value of `e` when it folds to a constant.
std::optional<bool> constBool(const Expr& e) {
  Expr folded;
  try {
    folded = e.as<graph::ConstantNode>() ? e : graph::foldConstant(e);
  } catch (const Error&) {
    return std::nullopt;
  }
  const auto* k = folded.as<graph::ConstantNode>();
  if (!k || k->data.numel() != 1) return std::nullopt;
  const runtime::NDArray& a = k->data;
  switch (a.dtype().code) {
  case runtime::DType::Float: return a.dtype().bits == 64 ? a.as<double>()[0] != 0 : a.as<float>()[0] != 0;
  case runtime::DType::Int:
    return a.dtype().bits == 64 ? a.as<int64_t>()[0] != 0 : a.dtype().bits == 32 ? a.as<int32_t>()[0] != 0 : a.as<int8_t>()[0] != 0;
  default: return a.as<uint8_t>()[0] != 0;
  }
}

/// `parts` (one per iteration, equal shapes) stacked along a new axis `axis`.
Expr stack(Context& c, const Outs& parts, int64_t axis) {
  Outs expanded;
  for (const Expr& p : parts) {
    std::vector<int64_t> s = c.staticShape(p);
    if (axis < 0) axis += int64_t(s.size()) + 1;
    if (axis < 0 || axis > int64_t(s.size())) c.fail("scan output axis " + std::to_string(axis) + " is out of range");
    s.insert(s.begin() + axis, 1);
    expanded.push_back(c.call("reshape", {p}, {{"newshape", s}}));
  }
  return expanded.size() == 1 ? expanded[0] : c.call("concatenate", expanded, {{"axis", axis}});
}

/// x[..., i, ...] along `axis`, the axis dropped.
Expr sliceAt(Context& c, const Expr& x, int64_t axis, int64_t i) {
  std::vector<int64_t> s = c.staticShape(x);
  Expr one = c.call("strided_slice", {x},
                    {{"begin", std::vector<int64_t>{i}},
                     {"end", std::vector<int64_t>{i + 1}},
                     {"strides", std::vector<int64_t>{1}},
                     {"axes", std::vector<int64_t>{axis}}});
  s.erase(s.begin() + axis);
  return c.call("reshape", {one}, {{"newshape", s}});
}

Outs loop(Context& c) {
  const onnx::GraphProto& body = graphAttr(c, "body");
  // Without a trip count the loop runs while its condition holds (it must fold each time).
  // A trip count known only at run time (a NonZero count, a symbolic dim) cannot be unrolled.
  if (c.hasInput(0))
    for (const tir::Expr& v : c.shapeInput(0))
      if (!tir::asConstInt(v))
        c.fail("the trip count is " + arith::exprText(v) +
               ", known only at run time (a data-dependent count or a symbolic dim); Loop is unrolled "
               "at import, so its trip count must fold to a constant");
  const int64_t trips = c.hasInput(0) ? c.constInts(0).at(0) : -1;
  bool go = true;
  if (c.hasInput(1)) {
    std::optional<bool> b = constBool(c.input(1));
    if (!b) c.constInput(1);  // fails naming the input: it must be a constant
    go = *b;
  }
  if (trips < 0 && !c.hasInput(1)) c.fail("a Loop with neither a trip count nor a condition never ends");
  if (trips > kMaxUnroll)
    c.fail("trip count " + std::to_string(trips) + " is above " + std::to_string(kMaxUnroll) +
           " (Loop is unrolled at import)");
  Outs carried;
  for (int i = 2; i < c.numInputs(); ++i) carried.push_back(c.input(i));
  const int numScan = body.output_size() - 1 - int(carried.size());
  if (body.input_size() != 2 + int(carried.size()) || numScan < 0)
    c.fail("the body takes " + std::to_string(body.input_size()) + " inputs and gives " +
           std::to_string(body.output_size()) + " outputs for " + std::to_string(carried.size()) +
           " loop-carried values");
  std::vector<Outs> scans(static_cast<size_t>(numScan));
  int64_t i = 0;
  for (; go && (trips < 0 || i < trips); ++i) {
    if (i >= kMaxUnroll)
      c.fail("the condition still holds after " + std::to_string(kMaxUnroll) + " iterations (Loop is unrolled at import)");
    Outs in{graph::makeScalar(double(i), DataType::Int(64)), graph::makeScalar(1.0, DataType::Bool())};
    in.insert(in.end(), carried.begin(), carried.end());
    Outs r = inlineGraph(c, body, "Loop body (iteration " + std::to_string(i) + ")", in);
    std::optional<bool> next = constBool(r[0]);
    if (!next) c.fail("the body's condition depends on data in iteration " + std::to_string(i) +
                      "; only loops whose condition folds to a constant are unrolled");
    go = *next;
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = r[1 + k];
    for (size_t k = 0; k < scans.size(); ++k) scans[k].push_back(r[1 + carried.size() + k]);
  }
  Outs out = carried;
  for (auto& s : scans) {
    if (s.empty()) c.fail("the loop runs no iteration, so its scan outputs have no static shape");
    out.push_back(stack(c, s, 0));
  }
  return out;
}

/// The iterations of a Scan (opset 9+ semantics): states, then scan inputs sliced along their
/// axes; returns the final states, then the scan outputs.
Outs scanCore(Context& c, const onnx::GraphProto& body, Outs states, const Outs& scanIns,
              const std::vector<int64_t>& inAxes, const std::vector<int64_t>& inDirs,
              const std::vector<int64_t>& outAxes, const std::vector<int64_t>& outDirs) {
  if (scanIns.empty()) c.fail("Scan needs at least one scan input");
  int64_t T = -1;
  std::vector<int64_t> axes;
  for (size_t j = 0; j < scanIns.size(); ++j) {
    std::vector<int64_t> s = c.staticShape(scanIns[j]);
    int64_t a = j < inAxes.size() ? inAxes[j] : 0;
    if (a < 0) a += int64_t(s.size());
    if (a < 0 || a >= int64_t(s.size())) c.fail("scan input " + std::to_string(j) + ": axis out of range");
    if (T >= 0 && s[a] != T) c.fail("scan inputs differ in length: " + std::to_string(T) + " and " + std::to_string(s[a]));
    T = s[a];
    axes.push_back(a);
  }
  if (T > kMaxUnroll)
    c.fail("sequence length " + std::to_string(T) + " is above " + std::to_string(kMaxUnroll) + " (Scan is unrolled at import)");
  if (T == 0) c.fail("a Scan over an empty sequence has scan outputs of no static shape");
  const int numScanOut = body.output_size() - int(states.size());
  if (numScanOut < 0) c.fail("the body gives fewer outputs than there are states");
  std::vector<Outs> outs(static_cast<size_t>(numScanOut));
  for (int64_t t = 0; t < T; ++t) {
    Outs in = states;
    for (size_t j = 0; j < scanIns.size(); ++j) {
      bool rev = j < inDirs.size() && inDirs[j] == 1;
      in.push_back(sliceAt(c, scanIns[j], axes[j], rev ? T - 1 - t : t));
    }
    Outs r = inlineGraph(c, body, "Scan body (step " + std::to_string(t) + ")", in);
    for (size_t k = 0; k < states.size(); ++k) states[k] = r[k];
    for (size_t k = 0; k < outs.size(); ++k) outs[k].push_back(r[states.size() + k]);
  }
  Outs result = states;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (k < outDirs.size() && outDirs[k] == 1) std::reverse(outs[k].begin(), outs[k].end());
    result.push_back(stack(c, outs[k], k < outAxes.size() ? outAxes[k] : 0));
  }
  return result;
}

Outs scan(Context& c) {
  const onnx::GraphProto& body = graphAttr(c, "body");
  const int64_t M = c.attrInt("num_scan_inputs", -1);
  const int first = c.opset() < 9 ? 1 : 0;  // opset 8: input 0 is the optional sequence_lens
  const int N = c.numInputs() - first - int(M);
  if (M < 1 || N < 0) c.fail("num_scan_inputs " + std::to_string(M) + " does not fit " + std::to_string(c.numInputs()) + " inputs");
  Outs states, scanIns;
  for (int i = 0; i < N; ++i) states.push_back(c.input(first + i));
  for (int i = 0; i < M; ++i) scanIns.push_back(c.input(first + N + i));
  if (c.opset() >= 9)
    return scanCore(c, body, states, scanIns, c.attrInts("scan_input_axes"), c.attrInts("scan_input_directions"),
                    c.attrInts("scan_output_axes"), c.attrInts("scan_output_directions"));
  // Opset 8: every input has a leading batch axis and the sequence axis is 1; each batch entry
  // is its own scan. sequence_lens must be absent or the full length.
  const int64_t B = c.staticShape(scanIns[0]).at(0), T = c.staticShape(scanIns[0]).at(1);
  if (c.hasInput(0))
    for (int64_t len : c.constInts(0))
      if (len != T) c.fail("sequence_lens " + std::to_string(len) + " shorter than the sequence (" + std::to_string(T) + ") is not supported");
  std::vector<Outs> perBatch;
  for (int64_t b = 0; b < B; ++b) {
    Outs sb, xb;
    for (const Expr& s : states) sb.push_back(sliceAt(c, s, 0, b));
    for (const Expr& x : scanIns) xb.push_back(sliceAt(c, x, 0, b));
    perBatch.push_back(scanCore(c, body, sb, xb, {}, c.attrInts("directions"), {}, {}));
  }
  Outs out;
  for (size_t k = 0; k < perBatch[0].size(); ++k) {
    Outs parts;
    for (const Outs& r : perBatch) parts.push_back(r[k]);
    out.push_back(stack(c, parts, 0));
  }
  return out;
}

Outs ifOp(Context& c) {
  const onnx::GraphProto& thenG = graphAttr(c, "then_branch");
  const onnx::GraphProto& elseG = graphAttr(c, "else_branch");
  Expr cond = c.input(0);
  if (std::optional<bool> b = constBool(cond)) return inlineGraph(c, *b ? thenG : elseG, *b ? "then_branch" : "else_branch", {});
  Outs a = inlineGraph(c, thenG, "then_branch", {}), b = inlineGraph(c, elseG, "else_branch", {});
  if (a.size() != b.size())
    c.fail("the branches give " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " outputs");
  if (c.staticShape(cond).size() != 0) cond = c.call("reshape", {cond}, {{"newshape", std::vector<int64_t>{}}});
  Outs out;
  for (size_t k = 0; k < a.size(); ++k) {
    const graph::TensorTypeNode &ta = c.tensorType(a[k]), &tb = c.tensorType(b[k]);
    if (ta.dtype != tb.dtype || c.staticShape(a[k]) != c.staticShape(b[k])) {
      auto typeText = [&](const graph::TensorTypeNode& t, const Expr& e) {
        std::string r = t.dtype.str() + "[";
        for (int64_t d : c.staticShape(e)) r += (r.back() == '[' ? "" : ", ") + std::to_string(d);
        return r + "]";
      };
      c.fail("with a condition that depends on data, both branches must give outputs of one type; output " +
             std::to_string(k) + " is " + typeText(ta, a[k]) + " in then_branch and " + typeText(tb, b[k]) +
             " in else_branch");
    }
    out.push_back(c.call("where", {cond, a[k], b[k]}));
  }
  return out;
}

}  // namespace

const std::unordered_map<std::string, Converter>& controlFlowConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"Loop", loop},
      {"Scan", scan},
      {"If", ifOp},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
