// The Relay-style text printer of the graph IR.
#include "core/graph/Printer.h"

#include <cctype>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "core/graph/Op.h"

namespace loom::graph {

namespace {

/// A variable's printed name: ONNX allows names like "0" or "input:0" that would read as a
/// temporary or break the syntax, so those are quoted.
std::string varName(const std::string& n) {
  bool plain = !n.empty() && !std::isdigit(static_cast<unsigned char>(n[0]));
  for (char c : n)
    plain &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  return plain ? "%" + n : "%\"" + n + "\"";
}

class Printer {
public:
  std::string module(const Module& m) {
    std::string out;
    // main first, then the others by name.
    if (Function f = m.main()) out += function(f, "main");
    for (const auto& [name, f] : m.functions)
      if (name != "main") out += (out.empty() ? "" : "\n") + function(f, name);
    return out;
  }

  std::string function(const Function& f, const std::string& name) {
    std::ostringstream os;
    os << "def @" << name << signature(*f) << " {\n";
    body(os, f->body, "  ");
    os << "}\n";
    return os.str();
  }

  std::string expr(const Expr& e) {
    std::ostringstream os;
    body(os, e, "");
    return os.str();
  }

private:
  using Names = std::unordered_map<const ExprNode*, std::string>;
  std::unordered_map<const ConstantNode*, int> m_constants;
  std::vector<Names> m_scopes;

  std::string signature(const FunctionNode& f) {
    std::string s = "(";
    for (size_t i = 0; i < f.params.size(); ++i)
      s += (i ? ", " : "") + varName(f.params[i]->name) + ": " + typeStr(f.params[i]->annotation);
    if (f.primitive) s += std::string(f.params.empty() ? "" : ", ") + "Primitive=1";
    if (!f.name.empty() && f.primitive) s += ", Name=\"" + f.name + "\"";
    s += ")";
    if (f.body.type().defined()) s += " -> " + typeStr(f.body.type());
    return s;
  }

  static std::string scalarText(const ConstantNode& c) {
    DataType t = toDataType(c.data.dtype());
    char buf[64];
    const void* p = c.data.data();
    if (t == DataType::Float(32)) {
      std::snprintf(buf, sizeof buf, "%gf", double(*static_cast<const float*>(p)));
    } else if (t == DataType::Float(64)) {
      std::snprintf(buf, sizeof buf, "%gf64", *static_cast<const double*>(p));
    } else if (t == DataType::Int(64)) {
      std::snprintf(buf, sizeof buf, "%lldi64", (long long)*static_cast<const int64_t*>(p));
    } else if (t == DataType::Int(32)) {
      std::snprintf(buf, sizeof buf, "%d", *static_cast<const int32_t*>(p));
    } else if (t.isBool()) {
      return *static_cast<const uint8_t*>(p) ? "True" : "False";
    } else {
      return "";
    }
    return buf;
  }

  std::string atom(const Expr& e) {
    if (auto* v = e.as<VarNode>()) return varName(v->name);
    if (auto* c = e.as<ConstantNode>()) {
      if (c->data.shape().empty()) {
        std::string s = scalarText(*c);
        if (!s.empty()) return s;
      }
      auto it = m_constants.find(c);
      int k = it != m_constants.end() ? it->second : (m_constants[c] = int(m_constants.size()));
      return "meta[Constant][" + std::to_string(k) + "]";
    }
    for (auto s = m_scopes.rbegin(); s != m_scopes.rend(); ++s) {
      auto it = s->find(e.get());
      if (it != s->end()) return it->second;
    }
    LOOM_ICHECK(false) << "printer: operand printed before its definition";
  }

  std::string typeComment(const Expr& e) {
    return e.type().defined() ? " /* ty=" + typeStr(e.type()) + " */" : "";
  }

  /// The right-hand side text of a node whose operands are already named.
  std::string rhs(const Expr& e, const std::string& indent) {
    if (auto* c = e.as<CallNode>()) {
      std::string s = c->op ? c->op->name : atom(Expr(c->fn));
      s += "(";
      bool first = true;
      for (const Expr& a : c->args) {
        s += (first ? "" : ", ") + atom(a);
        first = false;
      }
      if (c->op)
        for (const AttrSpec& spec : c->op->attrs) {
          const AttrValue* v = c->attrs.find(spec.name);
          if (!v || (spec.defaultValue && *spec.defaultValue == *v)) continue;
          s += (first ? "" : ", ") + spec.name + "=" + attrValueStr(*v);
          first = false;
        }
      return s + ")" + typeComment(e);
    }
    if (auto* t = e.as<TupleNode>()) {
      std::string s = "(";
      for (size_t i = 0; i < t->fields.size(); ++i)
        s += (i ? ", " : "") + atom(t->fields[i]);
      if (t->fields.size() == 1) s += ",";
      return s + ")" + typeComment(e);
    }
    if (auto* g = e.as<TupleGetItemNode>())
      return atom(g->tuple) + "." + std::to_string(g->index) + typeComment(e);
    if (auto* f = e.as<FunctionNode>()) {
      std::ostringstream os;
      os << "fn " << signature(*f) << " {\n";
      body(os, f->body, indent + "  ");
      os << indent << "}";
      return os.str();
    }
    return atom(e);
  }

  void body(std::ostringstream& os, const Expr& root, const std::string& indent) {
    m_scopes.emplace_back();
    int counter = 0;
    for (const Expr& n : postOrder(root, false)) {
      if (n->kind == ExprKind::Var || n->kind == ExprKind::Constant) continue;
      if (n.same_as(root)) break;
      std::string name = "%" + std::to_string(counter++);
      os << indent << name << " = " << rhs(n, indent) << ";\n";
      m_scopes.back()[n.get()] = name;
    }
    os << indent << rhs(root, indent) << "\n";
    m_scopes.pop_back();
  }
};

} // namespace

std::string printModule(const Module& m) {
  return Printer().module(m);
}
std::string printFunction(const Function& f, const std::string& name) {
  return Printer().function(f, name);
}
std::string printExpr(const Expr& e) {
  return Printer().expr(e);
}

} // namespace loom::graph
