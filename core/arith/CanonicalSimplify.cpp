// Sum-of-products canonicalization: term collection, division splitting, comparison normal form.
#include "core/arith/CanonicalSimplify.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/arith/Analyzer.h"
#include "core/arith/Eval.h"
#include "core/arith/ExprOrder.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::arith {

using namespace tir;

namespace {

struct Overflow {};

/// A product of atoms, sorted.
using Mono = std::vector<Expr>;

int compareMono(const Mono& a, const Mono& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (int c = exprCompare(a[i], b[i])) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

struct Term {
  Mono mono;
  int64_t coef;
};

/// sum(coef * mono) + constant, values checked to stay inside `type`.
struct Sum {
  DataType type;
  std::vector<Term> terms;  // sorted by mono, no zero coefficients
  int64_t constant = 0;

  explicit Sum(DataType t) : type(t) {}

  int64_t check(__int128 v) const {
    ConstIntBound r = ConstIntBound::ofType(type);
    if (v < __int128(r.minValue) || v > __int128(r.maxValue)) throw Overflow{};
    return int64_t(v);
  }
  void addTerm(const Mono& m, int64_t c) {
    if (c == 0) return;
    auto it = std::lower_bound(terms.begin(), terms.end(), m,
                               [](const Term& t, const Mono& k) { return compareMono(t.mono, k) < 0; });
    if (it != terms.end() && compareMono(it->mono, m) == 0) {
      it->coef = check(__int128(it->coef) + c);
      if (it->coef == 0) terms.erase(it);
    } else {
      terms.insert(it, Term{m, c});
    }
  }
  void add(const Sum& o, int64_t scale) {
    for (auto& t : o.terms) addTerm(t.mono, check(__int128(t.coef) * scale));
    constant = check(__int128(constant) + check(__int128(o.constant) * scale));
  }
  void scaleBy(int64_t s) {
    if (s == 0) {
      terms.clear();
      constant = 0;
      return;
    }
    for (auto& t : terms) t.coef = check(__int128(t.coef) * s);
    constant = check(__int128(constant) * s);
  }
  bool isConst() const { return terms.empty(); }
};

int64_t gcd64(int64_t a, int64_t b) { return std::gcd(a < 0 ? -a : a, b < 0 ? -b : b); }

int64_t floorDiv(int64_t a, int64_t b) { return *foldIntBinary(BinOp::FloorDiv, a, b, DataType::Int(64)); }
int64_t floorMod(int64_t a, int64_t b) { return *foldIntBinary(BinOp::FloorMod, a, b, DataType::Int(64)); }

BinOp flip(BinOp op) {
  switch (op) {
  case BinOp::LT: return BinOp::GT;
  case BinOp::LE: return BinOp::GE;
  case BinOp::GT: return BinOp::LT;
  case BinOp::GE: return BinOp::LE;
  default: return op;
  }
}

}  // namespace

class CanonicalSimplifier::Impl : public IRMutator {
public:
  explicit Impl(Analyzer* a) : m_analyzer(a) {}

protected:
  Expr visit(const BinaryNode* n, const Expr& self) override {
    if (n->dtype.isInt() && n->dtype.isScalar() && isSumOp(n->op)) {
      try {
        return fromSum(toSum(self));
      } catch (const Overflow&) {
        return IRMutator::visit(n, self);
      }
    }
    if (isComparison(n->op) && n->a.dtype().isInt() && n->a.dtype().isScalar() && n->a.dtype() == n->b.dtype() &&
        exactDomain(n->a.dtype())) {
      try {
        return compare(n);
      } catch (const Overflow&) {
        return IRMutator::visit(n, self);
      }
    }
    return IRMutator::visit(n, self);
  }

private:
  /// Whether integer sums of type `t` are taken to be exact (no wrap-around): 32 and 64 bits.
  /// Narrower sums wrap for ordinary data values, so only + - * (exact modulo 2^bits) are
  /// rewritten for them; comparisons, division and modulo need the exact value.
  static bool exactDomain(DataType t) { return t.bits() >= 32; }
  static bool isSumOp(BinOp op) {
    switch (op) {
    case BinOp::Add: case BinOp::Sub: case BinOp::Mul: case BinOp::FloorDiv: case BinOp::FloorMod:
    case BinOp::Div: case BinOp::Mod: return true;
    default: return false;
    }
  }

  /// `e` as a single atom, its children canonical.
  Sum atom(const Expr& e) {
    Expr c = e;
    if (auto* b = e.as<BinaryNode>()) c = IRMutator::visit(b, e);
    else c = mutate(e);
    Sum s(e.dtype());
    if (auto* i = c.as<IntImmNode>()) {
      s.constant = i->value;
      return s;
    }
    s.addTerm(Mono{c}, 1);
    return s;
  }

  Sum toSum(const Expr& e) {
    DataType t = e.dtype();
    if (auto* i = e.as<IntImmNode>()) {
      Sum s(t);
      s.constant = i->value;
      return s;
    }
    auto* n = e.as<BinaryNode>();
    if (!n || !isSumOp(n->op)) return atom(e);
    switch (n->op) {
    case BinOp::Add:
    case BinOp::Sub: {
      Sum s = toSum(n->a);
      s.add(toSum(n->b), n->op == BinOp::Add ? 1 : -1);
      return s;
    }
    case BinOp::Mul: return multiply(toSum(n->a), toSum(n->b));
    default: {
      const int64_t* c = asConstInt(n->b);
      if (!c || *c <= 0) return atom(e);
      // Sums of int8/int16 values wrap around in the program (and in the interpreter), and + - *
      // stay exact modulo 2^bits; division and modulo do not: reducing the coefficients of
      // ((d - t) * m) % 5 to (4*t*m + d*m) % 5 changed the results once d - t wrapped
      // (fuzz_difftest TIR seed 100432). Index arithmetic (32, 64 bits) is taken not to wrap.
      if (!exactDomain(t)) return atom(e);
      bool floorLike = n->op == BinOp::FloorDiv || n->op == BinOp::FloorMod;
      if (!floorLike && m_analyzer->constIntBound(n->a).minValue < 0) return atom(e);
      bool isDiv = n->op == BinOp::FloorDiv || n->op == BinOp::Div;
      return isDiv ? divide(toSum(n->a), *c) : modulo(toSum(n->a), *c);
    }
    }
  }

  Sum multiply(const Sum& a, const Sum& b) {
    if (b.isConst()) {
      Sum s = a;
      s.scaleBy(b.constant);
      return s;
    }
    if (a.isConst()) {
      Sum s = b;
      s.scaleBy(a.constant);
      return s;
    }
    if ((a.terms.size() + 1) * (b.terms.size() + 1) > 16) {
      Sum s(a.type);
      s.addTerm(Mono{fromSum(a) * fromSum(b)}, 1);
      return s;
    }
    Sum s(a.type);
    for (auto& x : a.terms) {
      for (auto& y : b.terms) {
        Mono m = x.mono;
        m.insert(m.end(), y.mono.begin(), y.mono.end());
        std::sort(m.begin(), m.end(), ExprLess());
        s.addTerm(m, s.check(__int128(x.coef) * y.coef));
      }
    }
    for (auto& x : a.terms) s.addTerm(x.mono, s.check(__int128(x.coef) * b.constant));
    for (auto& y : b.terms) s.addTerm(y.mono, s.check(__int128(y.coef) * a.constant));
    s.constant = s.check(__int128(a.constant) * b.constant);
    return s;
  }

  /// Splits r = d*q + low with 0 <= low < d provable, for some d > 1 dividing c taken from the
  /// coefficients of r; nullopt when no such split exists.
  struct LowSplit {
    int64_t d;
    Sum high, low;
  };
  std::optional<LowSplit> splitLow(const Sum& r, int64_t c) {
    std::vector<int64_t> candidates;
    for (auto& t : r.terms) {
      int64_t m = t.coef < 0 ? -t.coef : t.coef;
      if (m > 1 && c % m == 0 && std::find(candidates.begin(), candidates.end(), m) == candidates.end())
        candidates.push_back(m);
    }
    for (int64_t d : candidates) {
      Sum high(r.type), low(r.type);
      for (auto& t : r.terms) {
        if (t.coef % d == 0) high.addTerm(t.mono, t.coef / d);
        else low.addTerm(t.mono, t.coef);
      }
      if (high.isConst() || low.isConst()) continue;
      high.constant = floorDiv(r.constant, d);
      low.constant = floorMod(r.constant, d);
      ConstIntBound b = m_analyzer->constIntBound(fromSum(low));
      if (b.minValue >= 0 && b.maxValue < d) return LowSplit{d, std::move(high), std::move(low)};
    }
    return std::nullopt;
  }

  /// floordiv(s, c) for c > 0 (also truncdiv of a non-negative s).
  Sum divide(const Sum& s, int64_t c) {
    Sum q(s.type), r(s.type);
    for (auto& t : s.terms) {
      if (t.coef % c == 0) q.addTerm(t.mono, t.coef / c);
      else r.addTerm(t.mono, t.coef);
    }
    q.constant = floorDiv(s.constant, c);
    r.constant = floorMod(s.constant, c);
    if (r.isConst()) {
      q.constant = q.check(__int128(q.constant) + floorDiv(r.constant, c));
      return q;
    }
    int64_t g = c;
    for (auto& t : r.terms) g = gcd64(g, t.coef);
    g = gcd64(g, r.constant);
    if (g > 1) {
      for (auto& t : r.terms) t.coef /= g;
      r.constant /= g;
      c /= g;
    }
    Expr re = fromSum(r);
    ConstIntBound b = m_analyzer->constIntBound(re);
    if (b.minValue != ConstIntBound::kNegInf && b.maxValue != ConstIntBound::kPosInf &&
        floorDiv(b.minValue, c) == floorDiv(b.maxValue, c)) {
      q.constant = q.check(__int128(q.constant) + floorDiv(b.minValue, c));
      return q;
    }
    if (auto split = splitLow(r, c)) {
      // floordiv(d*h + low, d*k) = floordiv(h, k) when 0 <= low < d.
      q.add(divide(split->high, c / split->d), 1);
      return q;
    }
    q.addTerm(Mono{Expr(new BinaryNode(s.type, BinOp::FloorDiv, re, intImm(s.type, c)))}, 1);
    return q;
  }

  /// floormod(s, c) for c > 0 (also truncmod of a non-negative s).
  Sum modulo(const Sum& s, int64_t c) {
    Sum r(s.type);
    for (auto& t : s.terms) r.addTerm(t.mono, floorMod(t.coef, c));
    r.constant = floorMod(s.constant, c);
    if (r.isConst()) return r;
    int64_t g = c;
    for (auto& t : r.terms) g = gcd64(g, t.coef);
    g = gcd64(g, r.constant);
    if (g > 1) {
      for (auto& t : r.terms) t.coef /= g;
      r.constant /= g;
      c /= g;
    }
    Expr re = fromSum(r);
    ConstIntBound b = m_analyzer->constIntBound(re);
    Sum out(s.type);
    if (b.minValue != ConstIntBound::kNegInf && b.maxValue != ConstIntBound::kPosInf &&
        floorDiv(b.minValue, c) == floorDiv(b.maxValue, c)) {
      out = r;
      out.constant = out.check(__int128(out.constant) - __int128(floorDiv(b.minValue, c)) * c);
    } else if (auto split = splitLow(r, c)) {
      // floormod(d*h + low, d*k) = floormod(h, k)*d + low when 0 <= low < d.
      out = modulo(split->high, c / split->d);
      out.scaleBy(split->d);
      out.add(split->low, 1);
    } else {
      out.addTerm(Mono{Expr(new BinaryNode(s.type, BinOp::FloorMod, re, intImm(s.type, c)))}, 1);
    }
    out.scaleBy(g);
    return out;
  }

  Expr monoExpr(const Mono& m) const {
    Expr e = m[0];
    for (size_t i = 1; i < m.size(); ++i) e = Expr(new BinaryNode(e.dtype(), BinOp::Mul, e, m[i]));
    return e;
  }

  Expr termExpr(const Term& t, int64_t coef) const {
    Expr m = monoExpr(t.mono);
    if (coef == 1) return m;
    return Expr(new BinaryNode(m.dtype(), BinOp::Mul, m, intImm(m.dtype(), coef)));
  }

  Expr fromSum(const Sum& s) const {
    DataType t = s.type;
    int64_t typeMin = ConstIntBound::ofType(t).minValue;
    Expr out;
    auto append = [&](BinOp op, const Expr& x) {
      out = out.defined() ? Expr(new BinaryNode(t, op, out, x)) : x;
    };
    for (auto& term : s.terms)
      if (term.coef > 0) append(BinOp::Add, termExpr(term, term.coef));
    bool constDone = false;
    if (!out.defined() && s.constant > 0) {
      out = intImm(t, s.constant);
      constDone = true;
    }
    for (auto& term : s.terms) {
      if (term.coef > 0) continue;
      if (!out.defined() || term.coef == typeMin) append(BinOp::Add, termExpr(term, term.coef));
      else append(BinOp::Sub, termExpr(term, -term.coef));
    }
    if (!constDone && s.constant != 0) {
      if (!out.defined() || s.constant > 0 || s.constant == typeMin) append(BinOp::Add, intImm(t, s.constant));
      else append(BinOp::Sub, intImm(t, -s.constant));
    }
    if (!out.defined()) out = intImm(t, 0);
    return out;
  }

  Expr compare(const BinaryNode* n) {
    DataType t = n->a.dtype();
    Sum d = toSum(n->a);
    d.add(toSum(n->b), -1);
    BinOp op = n->op;
    if (d.isConst()) {
      auto v = foldIntBinary(op, d.constant, 0, DataType::Int(64));
      return boolImm(*v != 0);
    }
    if (d.terms[0].coef < 0) {
      d.scaleBy(-1);
      op = flip(op);
    }
    int64_t g = 0;
    for (auto& term : d.terms) g = gcd64(g, term.coef);
    // d = g*S + k; compare S with a bound derived from -k / g.
    int64_t k = d.constant;
    int64_t rhs = 0;
    switch (op) {
    case BinOp::EQ:
    case BinOp::NE:
      if (k % g != 0) return boolImm(op == BinOp::NE);
      rhs = -k / g;
      break;
    case BinOp::LT:
    case BinOp::GE: rhs = -floorDiv(k, g); break;  // ceil(-k / g)
    case BinOp::LE:
    case BinOp::GT: rhs = floorDiv(-k, g); break;  // floor(-k / g)
    default: break;
    }
    Sum left(t), right(t);
    for (auto& term : d.terms) {
      if (term.coef > 0) left.addTerm(term.mono, term.coef / g);
      else right.addTerm(term.mono, -term.coef / g);
    }
    right.constant = right.check(rhs);
    Expr e(new BinaryNode(n->dtype, op, fromSum(left), fromSum(right)));
    return e;
  }

  Analyzer* m_analyzer;
};

CanonicalSimplifier::CanonicalSimplifier(Analyzer* analyzer) : m_impl(std::make_unique<Impl>(analyzer)) {}
CanonicalSimplifier::~CanonicalSimplifier() = default;
Expr CanonicalSimplifier::operator()(const Expr& e) { return m_impl->mutate(e); }

}  // namespace loom::arith
