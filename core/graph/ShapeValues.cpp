// Symbolic evaluation of shape computations.
#include "core/graph/ShapeValues.h"

#include <algorithm>
#include <set>

#include "core/arith/Analyzer.h"
#include "core/graph/Op.h"
#include "core/graph/SymDim.h"
#include "core/graph/Type.h"
#include "core/tir/Op.h"

namespace loom::graph {

namespace {

using Values = std::vector<tir::Expr>;

tir::Expr i64(int64_t v) { return tir::intImm(DataType::Int(64), v); }

std::optional<Values> constantValues(const runtime::NDArray& a) {
  if (a.shape().size() > 1 || a.numel() > 64) return std::nullopt;
  Values out;
  DataType t = toDataType(a.dtype());
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == DataType::Int(64))
      out.push_back(i64(a.as<int64_t>()[i]));
    else if (t == DataType::Int(32))
      out.push_back(i64(a.as<int32_t>()[i]));
    else if (t == DataType::Float(32) && float(int64_t(a.as<float>()[i])) == a.as<float>()[i])
      out.push_back(i64(int64_t(a.as<float>()[i])));
    else if (t == DataType::Float(64) && double(int64_t(a.as<double>()[i])) == a.as<double>()[i])
      out.push_back(i64(int64_t(a.as<double>()[i])));
    else
      return std::nullopt;
  }
  return out;
}

std::optional<int64_t> constOf(const tir::Expr& e) {
  if (const int64_t* v = tir::asConstInt(e)) return *v;
  return std::nullopt;
}

std::optional<Values> eval(const Expr& e, int depth) {
  if (depth > 64) return std::nullopt;
  if (auto* c = e.as<ConstantNode>()) return constantValues(c->data);
  auto* call = e.as<CallNode>();
  if (!call || !call->op) return std::nullopt;
  const std::string& op = call->op->name;
  if (op == "shape_of") {
    auto* t = call->args[0].type().as<TensorTypeNode>();
    if (!t) return std::nullopt;
    Values out;
    for (const Dim& d : t->shape) {
      tir::Expr x = dimExpr(d);
      if (!x.defined()) return std::nullopt;
      out.push_back(x);
    }
    return out;
  }
  if (op == "cast" || op == "reshape" || op == "squeeze" || op == "expand_dims") return eval(call->args[0], depth + 1);
  if (op == "concatenate") {
    Values out;
    for (const Expr& a : call->args) {
      auto v = eval(a, depth + 1);
      if (!v) return std::nullopt;
      out.insert(out.end(), v->begin(), v->end());
    }
    return out;
  }
  if (op == "strided_slice") {
    auto v = eval(call->args[0], depth + 1);
    if (!v) return std::nullopt;
    const auto& b = call->attrs.getInts("begin");
    const auto& en = call->attrs.getInts("end");
    const auto& st = call->attrs.getInts("strides");
    if (b.size() != 1 || en.size() != 1) return std::nullopt;
    int64_t n = int64_t(v->size()), step = st.empty() ? 1 : st[0];
    if (step == 0) return std::nullopt;
    int64_t lo = b[0] < 0 ? b[0] + n : b[0], hi = en[0] < 0 ? en[0] + n : en[0];
    Values out;
    if (step > 0) {
      lo = std::clamp<int64_t>(lo, 0, n);
      hi = std::clamp<int64_t>(hi, 0, n);
      for (int64_t i = lo; i < hi; i += step) out.push_back((*v)[size_t(i)]);
    } else {
      lo = std::clamp<int64_t>(lo, -1, n - 1);
      hi = std::clamp<int64_t>(hi, -1, n - 1);
      for (int64_t i = lo; i > hi; i += step) out.push_back((*v)[size_t(i)]);
    }
    return out;
  }
  if (op == "take") {
    if (call->attrs.getInt("axis") != 0) return std::nullopt;
    auto v = eval(call->args[0], depth + 1);
    auto idx = eval(call->args[1], depth + 1);
    if (!v || !idx) return std::nullopt;
    Values out;
    for (const tir::Expr& i : *idx) {
      auto k = constOf(i);
      if (!k) return std::nullopt;
      int64_t j = *k < 0 ? *k + int64_t(v->size()) : *k;
      if (j < 0 || j >= int64_t(v->size())) return std::nullopt;
      out.push_back((*v)[size_t(j)]);
    }
    return out;
  }
  if (op == "negative" && call->args.size() == 1) {
    auto a = eval(call->args[0], depth + 1);
    if (!a) return std::nullopt;
    Values out;
    for (const tir::Expr& x : *a) out.push_back(tir::intImm(x.dtype(), 0) - x);
    return out;
  }
  // torch's expand(n, -1, -1) exports its shape as Where(Equal(shape, -1), ones, shape): each
  // comparison of shape values is decided with every symbol at least 1 (a symbolic batch is no
  // -1), and `where` then picks one side by element (ViT's class token over a dynamic batch).
  if (op == "equal" && call->args.size() == 2) {
    auto a = eval(call->args[0], depth + 1), b = eval(call->args[1], depth + 1);
    if (!a || !b) return std::nullopt;
    size_t n = std::max(a->size(), b->size());
    if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1)) return std::nullopt;
    Values out;
    for (size_t i = 0; i < n; ++i) {
      std::optional<bool> eq = dimExprsEqual((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]);
      if (!eq) return std::nullopt;
      out.push_back(i64(*eq));
    }
    return out;
  }
  if (op == "where" && call->args.size() == 3) {
    auto c = eval(call->args[0], depth + 1), a = eval(call->args[1], depth + 1), b = eval(call->args[2], depth + 1);
    if (!c || !a || !b) return std::nullopt;
    size_t n = std::max({c->size(), a->size(), b->size()});
    for (const Values* v : {&*c, &*a, &*b})
      if (v->size() != n && v->size() != 1) return std::nullopt;
    Values out;
    for (size_t i = 0; i < n; ++i) {
      auto k = constOf((*c)[c->size() == 1 ? 0 : i]);
      if (!k) return std::nullopt;
      out.push_back(*k ? (*a)[a->size() == 1 ? 0 : i] : (*b)[b->size() == 1 ? 0 : i]);
    }
    return out;
  }
  static const std::set<std::string> arithmetic = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
  if (arithmetic.count(op) && call->args.size() == 2) {
    auto a = eval(call->args[0], depth + 1), b = eval(call->args[1], depth + 1);
    if (!a || !b) return std::nullopt;
    size_t n = std::max(a->size(), b->size());
    if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1)) return std::nullopt;
    bool isFloat = false;
    if (auto* t = e.type().as<TensorTypeNode>()) isFloat = t->dtype.isFloat();
    Values out;
    arith::Analyzer an;
    for (size_t i = 0; i < n; ++i) {
      tir::Expr x = (*a)[a->size() == 1 ? 0 : i], y = (*b)[b->size() == 1 ? 0 : i], r;
      if (op == "add") r = x + y;
      else if (op == "subtract") r = x - y;
      else if (op == "multiply") r = x * y;
      else if (op == "maximum") r = tir::max(x, y);
      else if (op == "minimum") r = tir::min(x, y);
      else {
        // Integer division of shape values (non-negative: floor and truncation agree); a float
        // division is exact only where it divides.
        auto yc = constOf(y);
        if (!yc || *yc <= 0) return std::nullopt;
        if (isFloat && !(constOf(x) && *constOf(x) % *yc == 0) &&
            !an.canProveEqual(tir::floormod(x, y), i64(0)))
          return std::nullopt;
        r = tir::floordiv(x, y);
      }
      out.push_back(r);
    }
    // Simplified, with every symbol at least 1.
    for (tir::Expr& x : out) x = simplifyDimExpr(x);
    return out;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<tir::Expr>> shapeValues(const Expr& e) { return eval(e, 0); }

}  // namespace loom::graph
