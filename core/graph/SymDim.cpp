// Symbolic dims as integer expressions over process-wide symbol variables.
#include "core/graph/SymDim.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>
#include <unordered_map>

#include "core/arith/Analyzer.h"
#include "core/arith/Eval.h"
#include "core/arith/ExprText.h"
#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Visitor.h"

namespace loom::graph {

namespace {

std::mutex g_mutex;
std::unordered_map<std::string, tir::Var>& symbols() {
  static std::unordered_map<std::string, tir::Var> s;
  return s;
}
/// Canonical text -> expression, for every symbolic dim made here (parsing is the fallback).
std::unordered_map<std::string, tir::Expr>& exprs() {
  static std::unordered_map<std::string, tir::Expr> s;
  return s;
}

bool isIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum((unsigned char)c) || c == '_')) return false;
  return true;
}

/// The variables an expression uses.
void collectVars(const tir::Expr& e, std::set<std::string>& out) {
  tir::postOrderVisit(e, [&](const tir::IRNode* x) {
    if (x->nodeKind == tir::NodeKind::Var) out.insert(static_cast<const tir::VarNode*>(x)->name);
  });
}

const std::set<std::string>& reservedWords() {
  static const std::set<std::string> r = {"min", "max", "truncdiv", "truncmod", "floordiv", "floormod",
                                          "select", "int64", "int32", "True", "False", "and", "or", "not", "T"};
  return r;
}

}  // namespace

std::string symbolName(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum((unsigned char)c) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit((unsigned char)out[0])) out = "s_" + out;
  if (reservedWords().count(out)) out += "_";
  return out;
}

tir::Var symbolVar(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = symbols().find(name);
  if (it != symbols().end()) return it->second;
  tir::Var v = tir::makeVar(name, DataType::Int(64));
  symbols().emplace(name, v);
  return v;
}

tir::Expr dimExpr(const Dim& d) {
  if (d.isStatic()) return tir::intImm(DataType::Int(64), d.value);
  if (d.name.empty()) return {};
  if (isIdentifier(d.name) && !reservedWords().count(d.name)) return symbolVar(d.name);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = exprs().find(d.name);
    if (it != exprs().end()) return it->second;
  }
  // Text from elsewhere (a printed graph, an ONNX dim_param such as "seq + 1"): parse it with
  // every identifier in it as a symbol.
  std::vector<tir::Var> vars;
  std::string word;
  auto flush = [&] {
    if (!word.empty() && !std::isdigit((unsigned char)word[0]) && !reservedWords().count(word))
      vars.push_back(symbolVar(word));
    word.clear();
  };
  for (char c : d.name) {
    if (std::isalnum((unsigned char)c) || c == '_')
      word += c;
    else
      flush();
  }
  flush();
  tir::Expr e;
  try {
    e = tir::parseExpr(d.name, vars);
  } catch (const Error&) {
    return symbolVar(symbolName(d.name));
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  exprs().emplace(d.name, e);
  return e;
}

namespace {
/// Binds every symbol `e` uses in `an` to [1, 2^40).
void bindSymbols(arith::Analyzer& an, const tir::Expr& e) {
  std::set<std::string> names;
  collectVars(e, names);
  for (const std::string& n : names) an.bind(symbolVar(n), 1, (int64_t(1) << 40));
}
}  // namespace

tir::Expr simplifyDimExpr(const tir::Expr& e) {
  arith::Analyzer an;
  bindSymbols(an, e);
  return an.simplify(e);
}

std::optional<bool> dimExprsEqual(const tir::Expr& a, const tir::Expr& b) {
  arith::Analyzer an;
  const tir::Expr d = a - b;
  bindSymbols(an, d);
  const tir::Expr s = an.simplify(d);
  if (const int64_t* v = tir::asConstInt(s)) return *v == 0;
  if (an.canProveGreaterEqual(s, 1) || an.canProveLess(s, 0)) return false;
  return std::nullopt;
}

Dim dimOf(const tir::Expr& e) {
  if (!e.defined()) return Dim::any();
  tir::Expr s = simplifyDimExpr(e);
  if (const int64_t* v = tir::asConstInt(s)) return *v >= 0 ? Dim(*v) : Dim::any();
  if (auto* var = s.as<tir::VarNode>()) return Dim::symbol(var->name);
  std::string text = arith::exprText(s);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    exprs().emplace(text, s);
  }
  return Dim::symbol(text);
}

bool dimsProvablyEqual(const Dim& a, const Dim& b) {
  if (a.isStatic() || b.isStatic()) return a.isStatic() && b.isStatic() && a.value == b.value;
  if (a.name.empty() || b.name.empty()) return false;
  if (a.name == b.name) return true;
  return dimOf(dimExpr(a) - dimExpr(b)) == Dim(0);
}

std::vector<std::string> dimSymbols(const Dim& d) {
  std::set<std::string> names;
  if (!d.isStatic() && !d.name.empty()) collectVars(dimExpr(d), names);
  return {names.begin(), names.end()};
}

std::optional<int64_t> evalDim(const Dim& d, const std::map<std::string, int64_t>& env) {
  if (d.isStatic()) return d.value;
  if (d.name.empty()) return std::nullopt;
  arith::VarValueMap values;
  for (const std::string& n : dimSymbols(d)) {
    auto it = env.find(n);
    if (it == env.end()) return std::nullopt;
    values[symbolVar(n)] = it->second;
  }
  return arith::evalInt(dimExpr(d), values);
}

Dim dimAdd(const Dim& a, const Dim& b) {
  if (a.isStatic() && b.isStatic()) return Dim(a.value + b.value);
  if ((!a.isStatic() && a.name.empty()) || (!b.isStatic() && b.name.empty())) return Dim::any();
  return dimOf(dimExpr(a) + dimExpr(b));
}

Dim dimMul(const Dim& a, const Dim& b) {
  if (a.isStatic() && b.isStatic()) return Dim(a.value * b.value);
  if (a == Dim(0) || b == Dim(0)) return Dim(0);
  if ((!a.isStatic() && a.name.empty()) || (!b.isStatic() && b.name.empty())) return Dim::any();
  return dimOf(dimExpr(a) * dimExpr(b));
}

Dim dimFloorDiv(const Dim& a, int64_t b) {
  LOOM_ICHECK(b > 0) << "dimFloorDiv by " << b;
  if (a.isStatic()) return Dim(a.value >= 0 ? a.value / b : -((-a.value + b - 1) / b));
  if (a.name.empty()) return Dim::any();
  return dimOf(tir::floordiv(dimExpr(a), tir::intImm(DataType::Int(64), b)));
}

namespace {

/// The factors of a product (constants multiplied into `coeff`).
void factors(const tir::Expr& e, int64_t& coeff, std::vector<tir::Expr>& out) {
  if (const int64_t* v = tir::asConstInt(e)) {
    coeff *= *v;
    return;
  }
  if (auto* b = e.as<tir::BinaryNode>(); b && b->op == tir::BinOp::Mul) {
    factors(b->a, coeff, out);
    factors(b->b, coeff, out);
    return;
  }
  out.push_back(e);
}

}  // namespace

std::optional<Dim> dimDivExact(const Dim& a, const Dim& b) {
  if (a.isStatic() && b.isStatic()) {
    if (b.value == 0 || a.value % b.value != 0) return std::nullopt;
    return Dim(a.value / b.value);
  }
  tir::Expr ea = dimExpr(a), eb = dimExpr(b);
  if (!ea.defined() || !eb.defined()) return std::nullopt;
  int64_t ca = 1, cb = 1;
  std::vector<tir::Expr> fa, fb;
  factors(simplifyDimExpr(ea), ca, fa);
  factors(simplifyDimExpr(eb), cb, fb);
  for (const tir::Expr& f : fb) {
    std::string t = arith::exprText(f);
    auto it = std::find_if(fa.begin(), fa.end(), [&](const tir::Expr& g) { return arith::exprText(g) == t; });
    if (it == fa.end()) return std::nullopt;
    fa.erase(it);
  }
  if (cb == 0 || ca % cb != 0) return std::nullopt;
  tir::Expr r = tir::intImm(DataType::Int(64), ca / cb);
  for (const tir::Expr& f : fa) r = r * f;
  return dimOf(r);
}

std::string dimsText(const Shape& dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ";" : "") + dims[i].str();
  return out;
}

Shape parseDimsText(const std::string& text) {
  Shape out;
  if (text.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(';', start);
    std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    bool number = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    if (number)
      out.push_back(Dim(std::stoll(part)));
    else if (part == "?")
      out.push_back(Dim::any());
    else
      out.push_back(Dim::symbol(part));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

Dim dimProduct(const Shape& dims) {
  Dim p(1);
  for (const Dim& d : dims) p = dimMul(p, d);
  return p;
}

}  // namespace loom::graph
