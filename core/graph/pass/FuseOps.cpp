// FuseOps: TVM's graph partitioner (post-dominator tree, union-find groups, three phases).
#include "core/graph/pass/FuseOps.h"

#include <unordered_map>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

namespace {

// Step 1. The indexed forward graph: nodes in post-DFS order, each with its consumer edges.
struct Edge {
  int node;
  OpPattern pattern;
};
struct GNode {
  Expr expr;
  OpPattern pattern = OpPattern::Opaque;
  bool externRef = false; // the graph's result
  std::vector<Edge> outputs;
};

OpPattern combine(OpPattern a, OpPattern b) {
  return a > b ? a : b;
}

std::vector<GNode> buildGraph(const Expr& root, std::unordered_map<const ExprNode*, int>& index) {
  std::vector<GNode> g;
  for (const Expr& n : postOrder(root, false)) {
    if (n->kind == ExprKind::Function) continue;
    index[n.get()] = int(g.size());
    GNode node;
    node.expr = n;
    if (auto* c = n.as<CallNode>()) node.pattern = c->op ? c->op->pattern : OpPattern::Opaque;
    g.push_back(node);
  }
  for (GNode& node : g) {
    int me = index.at(node.expr.get());
    if (auto* c = node.expr.as<CallNode>()) {
      auto* out = node.expr.type().as<TensorTypeNode>();
      for (const Expr& a : c->args) {
        OpPattern ep = node.pattern;
        if (ep == OpPattern::Broadcast && out)
          if (auto* at = a.type().as<TensorTypeNode>(); at && at->shape == out->shape)
            ep = OpPattern::ElemWise;
        g[index.at(a.get())].outputs.push_back({me, ep});
      }
    } else if (auto* t = node.expr.as<TupleNode>()) {
      for (const Expr& f : t->fields)
        g[index.at(f.get())].outputs.push_back({me, OpPattern::Opaque});
    } else if (auto* gi = node.expr.as<TupleGetItemNode>()) {
      g[index.at(gi->tuple.get())].outputs.push_back({me, OpPattern::Opaque});
    }
  }
  g[index.at(root.get())].externRef = true;
  return g;
}

// Step 2. The post-dominator tree.
struct DomNode {
  int parent = -1;
  int depth = 0;
  OpPattern pattern = OpPattern::ElemWise;
};

int lca(const std::vector<DomNode>& dom, int a, int b, OpPattern& pattern) {
  while (a != b) {
    if (a < 0 || b < 0) return -1;
    if (dom[a].depth < dom[b].depth) {
      pattern = combine(pattern, dom[b].pattern);
      b = dom[b].parent;
    } else if (dom[b].depth < dom[a].depth) {
      pattern = combine(pattern, dom[a].pattern);
      a = dom[a].parent;
    } else {
      pattern = combine(pattern, combine(dom[a].pattern, dom[b].pattern));
      a = dom[a].parent;
      b = dom[b].parent;
    }
  }
  return a;
}

std::vector<DomNode> postDominators(const std::vector<GNode>& g) {
  std::vector<DomNode> dom(g.size());
  for (int i = int(g.size()) - 1; i >= 0; --i) {
    if (g[i].externRef || g[i].outputs.empty()) {
      dom[i] = {-1, 1, OpPattern::Opaque};
      continue;
    }
    OpPattern pattern = OpPattern::ElemWise;
    int parent = -1;
    bool first = true;
    for (const Edge& e : g[i].outputs) {
      pattern = combine(pattern, e.pattern);
      parent = first ? e.node : lca(dom, parent, e.node, pattern);
      first = false;
    }
    dom[i] = {parent, parent < 0 ? 1 : dom[parent].depth + 1, pattern};
  }
  return dom;
}

// Step 3. Union-find groups and the fusion phases.
struct Group {
  int parent = -1;
  OpPattern pattern;
  bool hasAnchor = false;
  int numNodes = 1;
};

class Partitioner {
public:
  Partitioner(const std::vector<GNode>& g, int maxDepth) : m_g(g), m_maxDepth(maxDepth) {
    for (const GNode& n : g) {
      Group gr;
      gr.pattern = n.pattern;
      gr.hasAnchor = n.pattern == OpPattern::OutEWiseFusable;
      // Variables and constants are not ops: they never join a group.
      gr.numNodes = n.expr->kind == ExprKind::Call ? 1 : 0;
      m_groups.push_back(gr);
    }
  }

  std::vector<int> run() {
    std::vector<DomNode> dom = postDominators(m_g);
    for (int phase = 0; phase < 3; ++phase)
      runPhase(dom, phase);
    std::vector<int> root(m_g.size());
    for (size_t i = 0; i < m_g.size(); ++i)
      root[i] = find(int(i));
    return root;
  }

private:
  const std::vector<GNode>& m_g;
  int m_maxDepth;
  std::vector<Group> m_groups;
  std::vector<bool> m_visited;

  int find(int i) {
    while (m_groups[i].parent >= 0) {
      int p = m_groups[i].parent;
      if (m_groups[p].parent >= 0) m_groups[i].parent = m_groups[p].parent;
      i = p;
    }
    return i;
  }

  bool isOp(int i) const {
    return m_g[i].expr->kind == ExprKind::Call && m_g[i].expr.as<CallNode>()->op;
  }

  template <class F> bool checkPath_(int src, int sink, F fcond) {
    if (m_visited[src]) return true;
    m_visited[src] = true;
    if (!isOp(src)) return false;
    Group& gr = m_groups[find(src)];
    if (!fcond(gr.pattern, src == sink)) return false;
    if (src == sink) return true;
    for (const Edge& e : m_g[src].outputs)
      if (!checkPath_(e.node, sink, fcond)) return false;
    return true;
  }

  template <class F> bool checkPath(int src, int sink, F fcond) {
    m_visited.assign(m_g.size(), false);
    for (const Edge& e : m_g[src].outputs)
      if (!checkPath_(e.node, sink, fcond)) return false;
    return true;
  }

  void mergeFromTo(int child, int parent) {
    child = find(child);
    parent = find(parent);
    if (child == parent) return;
    m_groups[parent].numNodes += m_groups[child].numNodes;
    m_groups[child].parent = parent;
    if (m_groups[child].hasAnchor) {
      m_groups[parent].hasAnchor = true;
      m_groups[parent].pattern = combine(m_groups[child].pattern, m_groups[parent].pattern);
    }
  }

  void commitFuse_(int src, int sink, int target) {
    if (src == sink || m_visited[src]) return;
    m_visited[src] = true;
    mergeFromTo(src, target);
    for (const Edge& e : m_g[src].outputs)
      commitFuse_(e.node, sink, target);
  }

  void commitFuse(int src, int sink) {
    m_visited.assign(m_g.size(), false);
    int target = find(sink);
    commitFuse_(src, sink, target);
  }

  /// Ops in the group of `child` plus those on its paths to `sink`'s group.
  int countFused(int child, int sink) {
    return m_groups[find(child)].numNodes + m_groups[find(sink)].numNodes;
  }

  /// A layout_transform NCHW -> NCHW{C}c that packs all C <= 4 channels of its input into one
  /// block (an RGB image going into the first conv of an NCHWc model), read only by a conv2d.
  bool packsNarrowInputIntoConv(int nid, int parent) const {
    auto* c = m_g[nid].expr.as<CallNode>();
    if (!c || !c->op || c->op->name != "layout_transform" || c->args.size() != 1) return false;
    if (m_g[nid].outputs.size() != 1 || m_g[nid].outputs[0].node != parent) return false;
    auto* p = m_g[parent].expr.as<CallNode>();
    if (!p || !p->op || p->op->name != "nn.conv2d" || p->args.empty() || !p->args[0].same_as(m_g[nid].expr)) return false;
    auto* t = c->args[0].type().as<TensorTypeNode>();
    if (!t || t->shape.size() != 4) return false;
    int64_t channels = t->shape[1].value;  // -1 unless static
    if (channels < 1 || channels > 4) return false;
    return c->attrs.getString("src_layout") == "NCHW" &&
           c->attrs.getString("dst_layout") == "NCHW" + std::to_string(channels) + "c";
  }

  void runPhase(const std::vector<DomNode>& dom, int phase) {
    for (size_t nid = 0; nid < m_g.size(); ++nid) {
      if (!isOp(int(nid))) continue;
      int gi = find(int(nid));
      OpPattern gp = m_groups[gi].pattern;
      if (gp == OpPattern::Opaque) continue;
      int parent = dom[nid].parent;
      if (parent < 0 || !isOp(parent)) continue;
      if (find(parent) == gi) continue;
      if (countFused(int(nid), parent) > m_maxDepth) continue;
      if (phase == 2) continue; // tuples are not fused (see FuseOps.h)
      // The model input's packing into the first conv's blocks is an index change of the conv's
      // input read (TVM leaves it a kernel of its own, a copy of the image): the conv reads the
      // NCHW image directly, as its padding is read. Only for one block of at most 4 channels:
      // the 3 or 4 planes the conv's input-channel loop walks stay 3 or 4 streams.
      if (gp == OpPattern::Injective && phase == 0 && m_groups[find(parent)].pattern == OpPattern::OutEWiseFusable &&
          packsNarrowInputIntoConv(int(nid), parent)) {
        commitFuse(int(nid), parent);
        continue;
      }
      if (gp == OpPattern::OutEWiseFusable) {
        if (phase != 0) continue;
        if (dom[nid].pattern == OpPattern::ElemWise) {
          auto fcond = [](OpPattern k, bool) { return k <= OpPattern::Broadcast; };
          if (checkPath(int(nid), parent, fcond)) commitFuse(int(nid), parent);
        }
      } else if (gp <= OpPattern::Broadcast) {
        OpPattern dp = dom[nid].pattern;
        if (dp <= OpPattern::Injective || dp == OpPattern::CommReduce) {
          auto fcond = [](OpPattern k, bool isSink) {
            if (!isSink) return k <= OpPattern::Injective;
            return k <= OpPattern::Injective || k == OpPattern::CommReduce ||
                   k == OpPattern::OutEWiseFusable;
          };
          if (checkPath(int(nid), parent, fcond)) commitFuse(int(nid), parent);
        }
      } else if (gp == OpPattern::Injective) {
        if (phase != 1) continue;
        auto fcond = [](OpPattern k, bool) { return k <= OpPattern::Injective; };
        if (checkPath(int(nid), parent, fcond)) commitFuse(int(nid), parent);
      }
    }
  }
};

std::string groupName(const std::vector<const CallNode*>& ops) {
  std::string name = "fused";
  for (const CallNode* c : ops) {
    std::string n = c->op->name;
    for (char& ch : n)
      if (ch == '.') ch = '_';
    name += "_" + n;
  }
  if (name.size() > 80) name = name.substr(0, 80);
  return name;
}

// Step 4. Rebuild: each group becomes a Primitive function called from the outer graph.
class FuseRebuilder {
public:
  FuseRebuilder(const std::vector<GNode>& g, const std::unordered_map<const ExprNode*, int>& index,
                std::vector<int> root)
      : m_g(g), m_index(index), m_root(std::move(root)) {}

  Expr run(const Expr& e) {
    for (size_t i = 0; i < m_g.size(); ++i) {
      const Expr& n = m_g[i].expr;
      if (auto* c = n.as<CallNode>(); c && c->op) {
        // Only the group's output node (its root) becomes visible outside.
        if (m_root[i] == int(i)) m_outer[n.get()] = buildGroup(int(i));
      } else if (auto* c = n.as<CallNode>()) {
        std::vector<Expr> args;
        for (const Expr& a : c->args)
          args.push_back(outer(a));
        m_outer[n.get()] = withArgs(*c, args);
      } else if (auto* t = n.as<TupleNode>()) {
        std::vector<Expr> f;
        for (const Expr& x : t->fields)
          f.push_back(outer(x));
        m_outer[n.get()] = makeTuple(f);
      } else if (auto* gi = n.as<TupleGetItemNode>()) {
        m_outer[n.get()] = makeTupleGetItem(outer(gi->tuple), gi->index);
      } else {
        m_outer[n.get()] = n;
      }
    }
    return outer(e);
  }

private:
  const std::vector<GNode>& m_g;
  const std::unordered_map<const ExprNode*, int>& m_index;
  std::vector<int> m_root;
  std::unordered_map<const ExprNode*, Expr> m_outer;

  Expr outer(const Expr& e) {
    auto it = m_outer.find(e.get());
    LOOM_ICHECK(it != m_outer.end()) << "FuseOps: node rebuilt out of order";
    return it->second;
  }

  struct GroupBuild {
    int group;
    std::vector<Var> params;
    std::vector<Expr> args;
    std::unordered_map<const ExprNode*, Expr> inner;
    std::vector<const CallNode*> ops;
  };

  Expr inside(const Expr& e, GroupBuild& gb) {
    auto it = gb.inner.find(e.get());
    if (it != gb.inner.end()) return it->second;
    Expr r;
    int idx = m_index.at(e.get());
    auto* c = e.as<CallNode>();
    if (c && c->op && m_root[idx] == gb.group) {
      std::vector<Expr> args;
      for (const Expr& a : c->args)
        args.push_back(inside(a, gb));
      r = withArgs(*c, args);
      gb.ops.push_back(c);
    } else if (auto* k = e.as<ConstantNode>();
               k && k->data.numel() == 1 && k->data.shape().empty()) {
      r = e;
    } else {
      Var p = makeVar("p" + std::to_string(gb.params.size()), e.type());
      gb.params.push_back(p);
      gb.args.push_back(outer(e));
      r = p;
    }
    gb.inner[e.get()] = r;
    return r;
  }

  Expr buildGroup(int rootIdx) {
    GroupBuild gb;
    gb.group = rootIdx;
    Expr body = inside(m_g[rootIdx].expr, gb);
    // Ops were collected in completion order, which is the post-order of the group.
    Function fn = makeFunction(gb.params, body, true, groupName(gb.ops));
    return makeFnCall(fn, gb.args);
  }
};

} // namespace

Expr fuseOps(const Expr& e, int maxDepth) {
  inferType(e);
  std::unordered_map<const ExprNode*, int> index;
  std::vector<GNode> g = buildGraph(e, index);
  std::vector<int> root = Partitioner(g, maxDepth).run();
  Expr out = FuseRebuilder(g, index, root).run(e);
  inferType(out);
  return out;
}

Module fuseOps(const Module& m, int maxDepth) {
  return mapFunctions(m, [maxDepth](const Expr& e) { return fuseOps(e, maxDepth); });
}

} // namespace loom::graph
