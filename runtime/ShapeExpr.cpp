// A recursive-descent parser and evaluator of shape expressions.
#include "runtime/ShapeExpr.h"

#include <cctype>
#include <set>

#include "runtime/RuntimeFailure.h"

namespace loom::runtime {

struct ShapeExpr::Node {
  enum Kind { Int, Sym, Add, Sub, Mul, FloorDiv, FloorMod, Neg, Min, Max } kind = Int;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> a, b;
};

namespace {

using NodeP = std::shared_ptr<const ShapeExpr::Node>;
using Node = ShapeExpr::Node;

NodeP make(Node::Kind k, NodeP a, NodeP b = nullptr) {
  auto n = std::make_shared<Node>();
  n->kind = k;
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

class Parser {
public:
  explicit Parser(const std::string& t) : m_t(t) {}
  NodeP parse() {
    NodeP e = sum();
    skip();
    if (m_i != m_t.size()) fail("unexpected '" + std::string(1, m_t[m_i]) + "'");
    return e;
  }

private:
  [[noreturn]] void fail(const std::string& why) const {
    throw RuntimeFailure("shape expression \"" + m_t + "\": " + why + " at offset " + std::to_string(m_i));
  }
  void skip() {
    while (m_i < m_t.size() && m_t[m_i] == ' ') ++m_i;
  }
  bool eat(const char* s) {
    skip();
    size_t n = std::char_traits<char>::length(s);
    if (m_t.compare(m_i, n, s) == 0) {
      m_i += n;
      return true;
    }
    return false;
  }
  NodeP sum() {
    NodeP e = product();
    while (true) {
      if (eat("+")) e = make(Node::Add, e, product());
      else if (eat("-")) e = make(Node::Sub, e, product());
      else return e;
    }
  }
  NodeP product() {
    NodeP e = unary();
    while (true) {
      if (eat("//")) e = make(Node::FloorDiv, e, unary());
      else if (eat("*")) e = make(Node::Mul, e, unary());
      else if (eat("%")) e = make(Node::FloorMod, e, unary());
      else return e;
    }
  }
  NodeP unary() {
    if (eat("-")) return make(Node::Neg, unary());
    return atom();
  }
  NodeP atom() {
    skip();
    if (eat("(")) {
      NodeP e = sum();
      if (!eat(")")) fail("expected ')'");
      return e;
    }
    if (m_i < m_t.size() && std::isdigit((unsigned char)m_t[m_i])) {
      size_t s = m_i;
      while (m_i < m_t.size() && std::isdigit((unsigned char)m_t[m_i])) ++m_i;
      auto n = std::make_shared<Node>();
      n->kind = Node::Int;
      n->value = std::stoll(m_t.substr(s, m_i - s));
      return n;
    }
    if (m_i < m_t.size() && (std::isalpha((unsigned char)m_t[m_i]) || m_t[m_i] == '_')) {
      size_t s = m_i;
      while (m_i < m_t.size() && (std::isalnum((unsigned char)m_t[m_i]) || m_t[m_i] == '_')) ++m_i;
      std::string w = m_t.substr(s, m_i - s);
      if ((w == "min" || w == "max") && eat("(")) {
        NodeP a = sum();
        if (!eat(",")) fail("expected ','");
        NodeP b = sum();
        if (!eat(")")) fail("expected ')'");
        return make(w == "min" ? Node::Min : Node::Max, a, b);
      }
      auto n = std::make_shared<Node>();
      n->kind = Node::Sym;
      n->name = w;
      return n;
    }
    fail(m_i < m_t.size() ? "unexpected '" + std::string(1, m_t[m_i]) + "'" : "unexpected end");
  }

  const std::string& m_t;
  size_t m_i = 0;
};

int64_t evalNode(const Node& n, const std::map<std::string, int64_t>& env, const std::string& text) {
  auto sub = [&](const NodeP& p) { return evalNode(*p, env, text); };
  switch (n.kind) {
  case Node::Int: return n.value;
  case Node::Sym: {
    auto it = env.find(n.name);
    if (it == env.end()) throw RuntimeFailure("shape expression \"" + text + "\": symbol '" + n.name + "' has no value");
    return it->second;
  }
  case Node::Add: return sub(n.a) + sub(n.b);
  case Node::Sub: return sub(n.a) - sub(n.b);
  case Node::Mul: return sub(n.a) * sub(n.b);
  case Node::Neg: return -sub(n.a);
  case Node::Min: return std::min(sub(n.a), sub(n.b));
  case Node::Max: return std::max(sub(n.a), sub(n.b));
  case Node::FloorDiv:
  case Node::FloorMod: {
    int64_t x = sub(n.a), y = sub(n.b);
    if (y == 0) throw RuntimeFailure("shape expression \"" + text + "\": division by zero");
    int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) {
      --q;
      r += y;
    }
    return n.kind == Node::FloorDiv ? q : r;
  }
  }
  return 0;
}

void collect(const Node& n, std::set<std::string>& out) {
  if (n.kind == Node::Sym) out.insert(n.name);
  if (n.a) collect(*n.a, out);
  if (n.b) collect(*n.b, out);
}

}  // namespace

ShapeExpr::ShapeExpr(const std::string& text) : m_text(text), m_root(Parser(text).parse()) {}

ShapeExpr ShapeExpr::constant(int64_t v) {
  ShapeExpr e;
  e.m_text = std::to_string(v);
  auto n = std::make_shared<Node>();
  n->kind = Node::Int;
  n->value = v;
  e.m_root = n;
  return e;
}

int64_t ShapeExpr::eval(const std::map<std::string, int64_t>& symbols) const {
  if (!m_root) throw RuntimeFailure("empty shape expression");
  return evalNode(*m_root, symbols, m_text);
}

std::vector<std::string> ShapeExpr::symbols() const {
  std::set<std::string> s;
  if (m_root) collect(*m_root, s);
  return {s.begin(), s.end()};
}

bool ShapeExpr::isConstant() const { return m_root && m_root->kind == Node::Int; }

}  // namespace loom::runtime
