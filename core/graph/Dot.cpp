// Graphviz dot text of a graph, with fused groups as clusters.
#include "core/graph/Dot.h"

#include <sstream>
#include <unordered_map>

#include "core/graph/Op.h"

namespace loom::graph {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

class DotWriter {
public:
  std::string run(const Function& f, const std::string& name) {
    m_os << "digraph \"" << escape(name)
         << "\" {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n";
    std::unordered_map<const ExprNode*, std::string> ids;
    for (const Var& p : f->params)
      ids[p.get()] = declare("ellipse", "%" + p->name + "\n" + typeStr(p->annotation), "  ");
    std::string out = emit(f->body, ids, "  ");
    m_os << "  output [shape=doublecircle, label=\"out\"];\n  " << out << " -> output;\n}\n";
    return m_os.str();
  }

private:
  std::ostringstream m_os;
  int m_next = 0, m_cluster = 0;

  std::string declare(const std::string& shape, const std::string& label,
                      const std::string& indent) {
    std::string id = "n" + std::to_string(m_next++);
    m_os << indent << id << " [shape=" << shape << ", label=\"" << escape(label) << "\"];\n";
    return id;
  }

  void edge(const std::string& from, const std::string& to) {
    m_os << "  " << from << " -> " << to << ";\n";
  }

  /// Emits the nodes of `root` (operands first); returns the id of root's node.
  std::string emit(const Expr& root, std::unordered_map<const ExprNode*, std::string>& ids,
                   const std::string& indent) {
    for (const Expr& n : postOrder(root, false)) {
      if (ids.count(n.get()) || n->kind == ExprKind::Function) continue;
      std::string type = n.type().defined() ? "\n" + typeStr(n.type()) : "";
      if (auto* c = n.as<ConstantNode>()) {
        std::string label = c->name.empty() ? "const" : c->name;
        ids[n.get()] = declare("note", label + type, indent);
      } else if (auto* v = n.as<VarNode>()) {
        ids[n.get()] = declare("ellipse", "%" + v->name + type, indent);
      } else if (auto* c = n.as<CallNode>(); c && c->fn.defined()) {
        ids[n.get()] = cluster(*c, ids, indent);
      } else if (auto* c = n.as<CallNode>()) {
        std::string id = declare("box", c->op->name + type, indent);
        for (const Expr& a : c->args)
          edge(ids.at(a.get()), id);
        ids[n.get()] = id;
      } else if (auto* t = n.as<TupleNode>()) {
        std::string id = declare("circle", "tuple", indent);
        for (const Expr& x : t->fields)
          edge(ids.at(x.get()), id);
        ids[n.get()] = id;
      } else if (auto* g = n.as<TupleGetItemNode>()) {
        std::string id = declare("circle", "." + std::to_string(g->index), indent);
        edge(ids.at(g->tuple.get()), id);
        ids[n.get()] = id;
      }
    }
    return ids.at(root.get());
  }

  std::string cluster(const CallNode& call, std::unordered_map<const ExprNode*, std::string>& outer,
                      const std::string& indent) {
    const FunctionNode& fn = *call.fn;
    m_os << indent << "subgraph cluster_" << m_cluster++ << " {\n"
         << indent << "  label=\"" << escape(calleeName(call)) << "\";\n"
         << indent << "  style=rounded; color=\"#4a7ebb\";\n";
    std::unordered_map<const ExprNode*, std::string> inner;
    for (size_t i = 0; i < fn.params.size(); ++i)
      inner[fn.params[i].get()] = outer.at(call.args[i].get());
    std::string out = emit(fn.body, inner, indent + "  ");
    m_os << indent << "}\n";
    return out;
  }
};

} // namespace

std::string toDot(const Function& f, const std::string& name) {
  return DotWriter().run(f, name);
}

} // namespace loom::graph
