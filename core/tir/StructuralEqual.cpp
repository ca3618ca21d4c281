// Structural equality, hashing and diff of TIR: one walker for equality/diff, one for hashing.
#include "core/tir/StructuralEqual.h"

#include <cstring>
#include <sstream>
#include <unordered_map>

#include "core/tir/Op.h"

namespace loom::tir {

namespace {

// --- A compact one-line rendering of nodes, for diff messages ------------------------------

const char* nodeKindName(NodeKind k) {
  switch (k) {
  case NodeKind::IntImm: return "IntImm";
  case NodeKind::FloatImm: return "FloatImm";
  case NodeKind::StringImm: return "StringImm";
  case NodeKind::Var: return "Var";
  case NodeKind::Cast: return "Cast";
  case NodeKind::Binary: return "Binary";
  case NodeKind::Not: return "Not";
  case NodeKind::Select: return "Select";
  case NodeKind::Let: return "Let";
  case NodeKind::BufferLoad: return "BufferLoad";
  case NodeKind::Ramp: return "Ramp";
  case NodeKind::Broadcast: return "Broadcast";
  case NodeKind::Call: return "Call";
  case NodeKind::BufferStore: return "BufferStore";
  case NodeKind::LetStmt: return "LetStmt";
  case NodeKind::AttrStmt: return "AttrStmt";
  case NodeKind::AssertStmt: return "AssertStmt";
  case NodeKind::Allocate: return "Allocate";
  case NodeKind::DeclBuffer: return "DeclBuffer";
  case NodeKind::SeqStmt: return "SeqStmt";
  case NodeKind::IfThenElse: return "IfThenElse";
  case NodeKind::For: return "For";
  case NodeKind::While: return "While";
  case NodeKind::Evaluate: return "Evaluate";
  case NodeKind::Block: return "Block";
  case NodeKind::BlockRealize: return "BlockRealize";
  }
  return "?";
}

void showExpr(std::ostream& os, const Expr& e, int depth);

void showList(std::ostream& os, const std::vector<Expr>& v, int depth) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) os << ", ";
    showExpr(os, v[i], depth);
  }
}

void showExpr(std::ostream& os, const Expr& e, int depth) {
  if (!e.defined()) {
    os << "<undefined>";
    return;
  }
  if (depth > 6) {
    os << "...";
    return;
  }
  ++depth;
  switch (e->nodeKind) {
  case NodeKind::IntImm: {
    auto* n = e.as<IntImmNode>();
    if (n->dtype.isBool()) os << (n->value ? "True" : "False");
    else os << n->value;
    if (n->dtype != DataType::Int(32) && !n->dtype.isBool()) os << ":" << n->dtype.str();
    break;
  }
  case NodeKind::FloatImm: {
    auto* n = e.as<FloatImmNode>();
    std::ostringstream v;
    v.precision(17);
    v << n->value;
    os << v.str() << ":" << n->dtype.str();
    break;
  }
  case NodeKind::StringImm: os << '"' << e.as<StringImmNode>()->value << '"'; break;
  case NodeKind::Var: os << e.as<VarNode>()->name; break;
  case NodeKind::Cast: {
    auto* n = e.as<CastNode>();
    os << "T.Cast(\"" << n->dtype.str() << "\", ";
    showExpr(os, n->value, depth);
    os << ")";
    break;
  }
  case NodeKind::Binary: {
    auto* n = e.as<BinaryNode>();
    if (const char* sym = binOpSymbol(n->op)) {
      os << "(";
      showExpr(os, n->a, depth);
      os << " " << sym << " ";
      showExpr(os, n->b, depth);
      os << ")";
    } else {
      os << "T." << binOpName(n->op) << "(";
      showExpr(os, n->a, depth);
      os << ", ";
      showExpr(os, n->b, depth);
      os << ")";
    }
    break;
  }
  case NodeKind::Not:
    os << "not ";
    showExpr(os, e.as<NotNode>()->a, depth);
    break;
  case NodeKind::Select: {
    auto* n = e.as<SelectNode>();
    os << "T.Select(";
    showList(os, {n->condition, n->trueValue, n->falseValue}, depth);
    os << ")";
    break;
  }
  case NodeKind::Let: {
    auto* n = e.as<LetNode>();
    os << "T.Let(" << n->var->name << " = ";
    showExpr(os, n->value, depth);
    os << ", ";
    showExpr(os, n->body, depth);
    os << ")";
    break;
  }
  case NodeKind::BufferLoad: {
    auto* n = e.as<BufferLoadNode>();
    os << n->buffer->name << "[";
    showList(os, n->indices, depth);
    os << "]";
    break;
  }
  case NodeKind::Ramp: {
    auto* n = e.as<RampNode>();
    os << "T.Ramp(";
    showExpr(os, n->base, depth);
    os << ", ";
    showExpr(os, n->stride, depth);
    os << ", " << n->lanes << ")";
    break;
  }
  case NodeKind::Broadcast: {
    auto* n = e.as<BroadcastNode>();
    os << "T.Broadcast(";
    showExpr(os, n->value, depth);
    os << ", " << n->lanes << ")";
    break;
  }
  case NodeKind::Call: {
    auto* n = e.as<CallNode>();
    os << "T." << n->op << "(";
    showList(os, n->args, depth);
    os << ")";
    break;
  }
  default: os << nodeKindName(e->nodeKind); break;
  }
}

std::string show(const Expr& e) {
  std::ostringstream os;
  showExpr(os, e, 0);
  return os.str();
}

std::string show(const Stmt& s) {
  if (!s.defined()) return "<undefined>";
  std::ostringstream os;
  switch (s->nodeKind) {
  case NodeKind::BufferStore: {
    auto* n = s.as<BufferStoreNode>();
    os << n->buffer->name << "[";
    showList(os, n->indices, 0);
    os << "] = ";
    showExpr(os, n->value, 0);
    break;
  }
  case NodeKind::LetStmt: os << "LetStmt " << s.as<LetStmtNode>()->var->name << " = " << show(s.as<LetStmtNode>()->value); break;
  case NodeKind::AttrStmt: os << "AttrStmt \"" << s.as<AttrStmtNode>()->key << "\""; break;
  case NodeKind::AssertStmt: os << "assert " << show(s.as<AssertStmtNode>()->condition); break;
  case NodeKind::Allocate: os << "Allocate " << s.as<AllocateNode>()->bufferVar->name; break;
  case NodeKind::DeclBuffer: os << "DeclBuffer " << s.as<DeclBufferNode>()->buffer->name; break;
  case NodeKind::SeqStmt: os << "SeqStmt of " << s.as<SeqStmtNode>()->seq.size(); break;
  case NodeKind::IfThenElse: os << "if " << show(s.as<IfThenElseNode>()->condition); break;
  case NodeKind::For: {
    auto* n = s.as<ForNode>();
    os << "for " << n->loopVar->name << " in " << forKindName(n->kind) << "(" << show(n->min) << ", "
       << show(n->extent) << ")";
    break;
  }
  case NodeKind::While: os << "while " << show(s.as<WhileNode>()->condition); break;
  case NodeKind::Evaluate: os << "Evaluate " << show(s.as<EvaluateNode>()->value); break;
  case NodeKind::Block: os << "block \"" << s.as<BlockNode>()->name << "\""; break;
  case NodeKind::BlockRealize: os << "realize block \"" << s.as<BlockRealizeNode>()->block->name << "\""; break;
  default: os << nodeKindName(s->nodeKind); break;
  }
  return os.str();
}

std::string show(const Buffer& b) {
  if (!b.defined()) return "<undefined>";
  std::ostringstream os;
  os << b->name << "(" << b->dtype.str() << ", [";
  showList(os, b->shape, 0);
  os << "], " << b->scope << ")";
  return os.str();
}

bool isZeroOffset(const Expr& e) { return !e.defined() || isZero(e); }

// --- Equality with a first-difference report -----------------------------------------------

class Comparer {
public:
  explicit Comparer(bool mapFreeVars = false) : m_defineFree(mapFreeVars) {}
  std::string diff;

  bool expr(const Expr& a, const Expr& b);
  bool stmt(const Stmt& a, const Stmt& b);
  bool func(const PrimFunc& a, const PrimFunc& b);

private:
  struct PathGuard {
    Comparer& c;
    PathGuard(Comparer& cc, std::string seg) : c(cc) { c.m_path.push_back(std::move(seg)); }
    ~PathGuard() { c.m_path.pop_back(); }
  };
  std::string path() const {
    std::string p;
    for (auto& s : m_path) p += s;
    return p.empty() ? "<root>" : p;
  }
  bool fail(const std::string& what, const std::string& l, const std::string& r) {
    if (diff.empty()) diff = path() + ": " + what + ": " + l + " vs " + r;
    return false;
  }
  template <class F> bool at(std::string seg, F&& f) {
    PathGuard g(*this, std::move(seg));
    return f();
  }
  bool exprs(const std::vector<Expr>& a, const std::vector<Expr>& b, const char* field);
  bool varUse(const VarNode* a, const VarNode* b);
  bool varDef(const Var& a, const Var& b);
  bool bufUse(const Buffer& a, const Buffer& b);
  bool bufDef(const Buffer& a, const Buffer& b);
  bool region(const BufferRegion& a, const BufferRegion& b);
  bool annotations(const Annotations& a, const Annotations& b, const char* field);
  bool exprNode(const Expr& a, const Expr& b);
  bool stmtNode(const Stmt& a, const Stmt& b);

  std::unordered_map<const VarNode*, const VarNode*> m_varL, m_varR;
  std::unordered_map<const BufferNode*, const BufferNode*> m_bufL, m_bufR;
  std::vector<std::string> m_path;
  bool m_defineFree = false;
};

bool Comparer::exprs(const std::vector<Expr>& a, const std::vector<Expr>& b, const char* field) {
  if (a.size() != b.size())
    return fail(std::string("number of ") + field, std::to_string(a.size()), std::to_string(b.size()));
  for (size_t i = 0; i < a.size(); ++i)
    if (!at("." + std::string(field) + "[" + std::to_string(i) + "]", [&] { return expr(a[i], b[i]); }))
      return false;
  return true;
}

bool Comparer::varUse(const VarNode* a, const VarNode* b) {
  auto it = m_varL.find(a);
  if (it != m_varL.end()) {
    if (it->second == b) return true;
    return fail("variable bound at a different definition", a->name, b->name);
  }
  if (m_varR.count(b)) return fail("variable bound at a different definition", a->name, b->name);
  if (a->dtype != b->dtype) return fail("variable dtype", a->dtype.str(), b->dtype.str());
  if (m_defineFree) {
    m_varL[a] = b;
    m_varR[b] = a;
    return true;
  }
  if (a == b) return true;
  return fail("different free variables", a->name, b->name);
}

bool Comparer::varDef(const Var& a, const Var& b) {
  if (a.defined() != b.defined())
    return fail("variable defined on one side only", a.defined() ? a->name : "<undefined>",
                b.defined() ? b->name : "<undefined>");
  if (!a.defined()) return true;
  if (a->dtype != b->dtype) return fail("variable dtype", a->dtype.str(), b->dtype.str());
  auto it = m_varL.find(a.get());
  if (it != m_varL.end()) {
    if (it->second == b.get()) return true;
    return fail("variable definitions do not correspond", a->name, b->name);
  }
  if (m_varR.count(b.get())) return fail("variable definitions do not correspond", a->name, b->name);
  m_varL[a.get()] = b.get();
  m_varR[b.get()] = a.get();
  return true;
}

bool Comparer::bufUse(const Buffer& a, const Buffer& b) {
  if (a.defined() != b.defined()) return fail("buffer", show(a), show(b));
  if (!a.defined()) return true;
  auto it = m_bufL.find(a.get());
  if (it != m_bufL.end()) {
    if (it->second == b.get()) return true;
    return fail("buffer bound at a different definition", show(a), show(b));
  }
  if (m_bufR.count(b.get())) return fail("buffer bound at a different definition", show(a), show(b));
  return bufDef(a, b);
}

bool Comparer::bufDef(const Buffer& a, const Buffer& b) {
  if (a.defined() != b.defined()) return fail("buffer", show(a), show(b));
  if (!a.defined()) return true;
  auto it = m_bufL.find(a.get());
  if (it != m_bufL.end()) {
    if (it->second == b.get()) return true;
    return fail("buffer definitions do not correspond", show(a), show(b));
  }
  if (m_bufR.count(b.get())) return fail("buffer definitions do not correspond", show(a), show(b));
  PathGuard g(*this, "{buffer " + a->name + "}");
  if (a->dtype != b->dtype) return fail("buffer dtype", a->dtype.str(), b->dtype.str());
  if (a->scope != b->scope) return fail("buffer scope", a->scope, b->scope);
  if (a->alignment != b->alignment)
    return fail("buffer alignment", std::to_string(a->alignment), std::to_string(b->alignment));
  bool saved = m_defineFree;
  m_defineFree = true;
  bool ok = at(".data", [&] { return varDef(a->data, b->data); }) && exprs(a->shape, b->shape, "shape") &&
            exprs(a->strides, b->strides, "strides");
  if (ok && !(isZeroOffset(a->elemOffset) && isZeroOffset(b->elemOffset)))
    ok = at(".elem_offset", [&] { return expr(a->elemOffset, b->elemOffset); });
  m_defineFree = saved;
  if (!ok) return false;
  m_bufL[a.get()] = b.get();
  m_bufR[b.get()] = a.get();
  return true;
}

bool Comparer::region(const BufferRegion& a, const BufferRegion& b) {
  if (!bufUse(a.buffer, b.buffer)) return false;
  if (a.region.size() != b.region.size())
    return fail("region rank", std::to_string(a.region.size()), std::to_string(b.region.size()));
  for (size_t i = 0; i < a.region.size(); ++i) {
    PathGuard g(*this, "[" + std::to_string(i) + "]");
    if (!at(".min", [&] { return expr(a.region[i].min, b.region[i].min); })) return false;
    if (!at(".extent", [&] { return expr(a.region[i].extent, b.region[i].extent); })) return false;
  }
  return true;
}

bool Comparer::annotations(const Annotations& a, const Annotations& b, const char* field) {
  auto ia = a.begin();
  auto ib = b.begin();
  for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return fail(std::string(field) + " keys", ia->first, ib->first);
    if (!at("." + std::string(field) + "[\"" + ia->first + "\"]", [&] { return expr(ia->second, ib->second); }))
      return false;
  }
  if (ia != a.end()) return fail(std::string(field) + " key only on the left", ia->first, "<none>");
  if (ib != b.end()) return fail(std::string(field) + " key only on the right", "<none>", ib->first);
  return true;
}

bool Comparer::expr(const Expr& a, const Expr& b) {
  if (a.defined() != b.defined()) return fail("expression defined on one side only", show(a), show(b));
  if (!a.defined()) return true;
  if (a->nodeKind != b->nodeKind) return fail("node kind", show(a), show(b));
  if (a->dtype != b->dtype) return fail("dtype " + a->dtype.str() + " vs " + b->dtype.str(), show(a), show(b));
  return exprNode(a, b);
}

bool Comparer::exprNode(const Expr& a, const Expr& b) {
  switch (a->nodeKind) {
  case NodeKind::IntImm:
    if (a.as<IntImmNode>()->value != b.as<IntImmNode>()->value) return fail("value", show(a), show(b));
    return true;
  case NodeKind::FloatImm: {
    double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
    if (std::memcmp(&x, &y, sizeof x) != 0) return fail("value", show(a), show(b));
    return true;
  }
  case NodeKind::StringImm:
    if (a.as<StringImmNode>()->value != b.as<StringImmNode>()->value) return fail("value", show(a), show(b));
    return true;
  case NodeKind::Var: return varUse(a.as<VarNode>(), b.as<VarNode>());
  case NodeKind::Cast:
    return at(".value", [&] { return expr(a.as<CastNode>()->value, b.as<CastNode>()->value); });
  case NodeKind::Binary: {
    auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
    if (x->op != y->op) return fail("operator", show(a), show(b));
    return at(".a", [&] { return expr(x->a, y->a); }) && at(".b", [&] { return expr(x->b, y->b); });
  }
  case NodeKind::Not: return at(".a", [&] { return expr(a.as<NotNode>()->a, b.as<NotNode>()->a); });
  case NodeKind::Select: {
    auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
    return at(".condition", [&] { return expr(x->condition, y->condition); }) &&
           at(".true_value", [&] { return expr(x->trueValue, y->trueValue); }) &&
           at(".false_value", [&] { return expr(x->falseValue, y->falseValue); });
  }
  case NodeKind::Let: {
    auto *x = a.as<LetNode>(), *y = b.as<LetNode>();
    return at(".value", [&] { return expr(x->value, y->value); }) &&
           at(".var", [&] { return varDef(x->var, y->var); }) && at(".body", [&] { return expr(x->body, y->body); });
  }
  case NodeKind::BufferLoad: {
    auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
    return at(".buffer", [&] { return bufUse(x->buffer, y->buffer); }) && exprs(x->indices, y->indices, "indices");
  }
  case NodeKind::Ramp: {
    auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
    if (x->lanes != y->lanes) return fail("lanes", show(a), show(b));
    return at(".base", [&] { return expr(x->base, y->base); }) &&
           at(".stride", [&] { return expr(x->stride, y->stride); });
  }
  case NodeKind::Broadcast: {
    auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
    if (x->lanes != y->lanes) return fail("lanes", show(a), show(b));
    return at(".value", [&] { return expr(x->value, y->value); });
  }
  case NodeKind::Call: {
    auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
    if (x->op != y->op) return fail("called op", show(a), show(b));
    return exprs(x->args, y->args, "args");
  }
  default: return fail("not an expression kind", show(a), show(b));
  }
}

bool Comparer::stmt(const Stmt& a, const Stmt& b) {
  if (a.defined() != b.defined()) return fail("statement defined on one side only", show(a), show(b));
  if (!a.defined()) return true;
  if (a->nodeKind != b->nodeKind) return fail("statement kind", show(a), show(b));
  return stmtNode(a, b);
}

bool Comparer::stmtNode(const Stmt& a, const Stmt& b) {
  switch (a->nodeKind) {
  case NodeKind::BufferStore: {
    auto *x = a.as<BufferStoreNode>(), *y = b.as<BufferStoreNode>();
    return at(".buffer", [&] { return bufUse(x->buffer, y->buffer); }) &&
           at(".value", [&] { return expr(x->value, y->value); }) && exprs(x->indices, y->indices, "indices");
  }
  case NodeKind::LetStmt: {
    auto *x = a.as<LetStmtNode>(), *y = b.as<LetStmtNode>();
    return at(".value", [&] { return expr(x->value, y->value); }) &&
           at(".var", [&] { return varDef(x->var, y->var); }) && at(".body", [&] { return stmt(x->body, y->body); });
  }
  case NodeKind::AttrStmt: {
    auto *x = a.as<AttrStmtNode>(), *y = b.as<AttrStmtNode>();
    if (x->key != y->key) return fail("attr key", x->key, y->key);
    return at(".node", [&] { return expr(x->node, y->node); }) &&
           at(".value", [&] { return expr(x->value, y->value); }) && at(".body", [&] { return stmt(x->body, y->body); });
  }
  case NodeKind::AssertStmt: {
    auto *x = a.as<AssertStmtNode>(), *y = b.as<AssertStmtNode>();
    if (x->message != y->message) return fail("assert message", x->message, y->message);
    return at(".condition", [&] { return expr(x->condition, y->condition); }) &&
           at(".body", [&] { return stmt(x->body, y->body); });
  }
  case NodeKind::Allocate: {
    auto *x = a.as<AllocateNode>(), *y = b.as<AllocateNode>();
    if (x->dtype != y->dtype) return fail("allocate dtype", x->dtype.str(), y->dtype.str());
    if (x->scope != y->scope) return fail("allocate scope", x->scope, y->scope);
    return exprs(x->extents, y->extents, "extents") &&
           at(".condition", [&] { return expr(x->condition, y->condition); }) &&
           at(".buffer_var", [&] { return varDef(x->bufferVar, y->bufferVar); }) &&
           annotations(x->annotations, y->annotations, "annotations") &&
           at(".body", [&] { return stmt(x->body, y->body); });
  }
  case NodeKind::DeclBuffer: {
    auto *x = a.as<DeclBufferNode>(), *y = b.as<DeclBufferNode>();
    return at(".buffer", [&] { return bufDef(x->buffer, y->buffer); }) &&
           at(".body", [&] { return stmt(x->body, y->body); });
  }
  case NodeKind::SeqStmt: {
    auto &x = a.as<SeqStmtNode>()->seq, &y = b.as<SeqStmtNode>()->seq;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!at(".seq[" + std::to_string(i) + "]", [&] { return stmt(x[i], y[i]); })) return false;
    if (x.size() != y.size())
      return at(".seq[" + std::to_string(std::min(x.size(), y.size())) + "]", [&] {
        return fail("sequence length " + std::to_string(x.size()) + " vs " + std::to_string(y.size()),
                    x.size() > y.size() ? show(x[y.size()]) : "<end>",
                    y.size() > x.size() ? show(y[x.size()]) : "<end>");
      });
    return true;
  }
  case NodeKind::IfThenElse: {
    auto *x = a.as<IfThenElseNode>(), *y = b.as<IfThenElseNode>();
    return at(".condition", [&] { return expr(x->condition, y->condition); }) &&
           at(".then", [&] { return stmt(x->thenCase, y->thenCase); }) &&
           at(".else", [&] { return stmt(x->elseCase, y->elseCase); });
  }
  case NodeKind::For: {
    auto *x = a.as<ForNode>(), *y = b.as<ForNode>();
    PathGuard g(*this, "{for " + x->loopVar->name + "}");
    if (x->kind != y->kind) return fail("loop kind", forKindName(x->kind), forKindName(y->kind));
    if (x->threadTag != y->threadTag) return fail("thread tag", x->threadTag, y->threadTag);
    return at(".min", [&] { return expr(x->min, y->min); }) &&
           at(".extent", [&] { return expr(x->extent, y->extent); }) &&
           at(".loop_var", [&] { return varDef(x->loopVar, y->loopVar); }) &&
           annotations(x->annotations, y->annotations, "annotations") &&
           at(".body", [&] { return stmt(x->body, y->body); });
  }
  case NodeKind::While: {
    auto *x = a.as<WhileNode>(), *y = b.as<WhileNode>();
    return at(".condition", [&] { return expr(x->condition, y->condition); }) &&
           at(".body", [&] { return stmt(x->body, y->body); });
  }
  case NodeKind::Evaluate:
    return at(".value", [&] { return expr(a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value); });
  case NodeKind::Block: {
    auto *x = a.as<BlockNode>(), *y = b.as<BlockNode>();
    PathGuard g(*this, "{block " + x->name + "}");
    if (x->name != y->name) return fail("block name", x->name, y->name);
    if (x->iterVars.size() != y->iterVars.size())
      return fail("number of iter vars", std::to_string(x->iterVars.size()), std::to_string(y->iterVars.size()));
    for (size_t i = 0; i < x->iterVars.size(); ++i) {
      auto &u = x->iterVars[i], &v = y->iterVars[i];
      PathGuard gi(*this, ".iter_vars[" + std::to_string(i) + "]");
      if (u.iterType != v.iterType) return fail("iter type", iterTypeName(u.iterType), iterTypeName(v.iterType));
      if (!at(".dom.min", [&] { return expr(u.dom.min, v.dom.min); }) ||
          !at(".dom.extent", [&] { return expr(u.dom.extent, v.dom.extent); }) ||
          !at(".var", [&] { return varDef(u.var, v.var); }))
        return false;
    }
    if (x->allocBuffers.size() != y->allocBuffers.size())
      return fail("number of alloc_buffers", std::to_string(x->allocBuffers.size()),
                  std::to_string(y->allocBuffers.size()));
    for (size_t i = 0; i < x->allocBuffers.size(); ++i)
      if (!at(".alloc_buffers[" + std::to_string(i) + "]",
              [&] { return bufDef(x->allocBuffers[i], y->allocBuffers[i]); }))
        return false;
    auto regions = [&](const std::vector<BufferRegion>& p, const std::vector<BufferRegion>& q, const char* f) {
      if (p.size() != q.size())
        return fail(std::string("number of ") + f, std::to_string(p.size()), std::to_string(q.size()));
      for (size_t i = 0; i < p.size(); ++i)
        if (!at("." + std::string(f) + "[" + std::to_string(i) + "]", [&] { return region(p[i], q[i]); }))
          return false;
      return true;
    };
    return regions(x->reads, y->reads, "reads") && regions(x->writes, y->writes, "writes") &&
           at(".init", [&] { return stmt(x->init, y->init); }) &&
           at(".body", [&] { return stmt(x->body, y->body); }) &&
           annotations(x->annotations, y->annotations, "annotations");
  }
  case NodeKind::BlockRealize: {
    auto *x = a.as<BlockRealizeNode>(), *y = b.as<BlockRealizeNode>();
    return exprs(x->iterValues, y->iterValues, "iter_values") &&
           at(".predicate", [&] { return expr(x->predicate, y->predicate); }) &&
           stmt(Stmt(x->block), Stmt(y->block));
  }
  default: return fail("not a statement kind", show(a), show(b));
  }
}

bool Comparer::func(const PrimFunc& a, const PrimFunc& b) {
  if (a.defined() != b.defined()) return fail("function defined on one side only", "", "");
  if (!a.defined()) return true;
  if (a->params.size() != b->params.size())
    return fail("number of params", std::to_string(a->params.size()), std::to_string(b->params.size()));
  for (size_t i = 0; i < a->params.size(); ++i)
    if (!at(".params[" + std::to_string(i) + "]", [&] { return varDef(a->params[i], b->params[i]); }))
      return false;
  if (a->bufferMap.size() != b->bufferMap.size())
    return fail("buffer_map size", std::to_string(a->bufferMap.size()), std::to_string(b->bufferMap.size()));
  for (size_t i = 0; i < a->bufferMap.size(); ++i) {
    PathGuard g(*this, ".buffer_map[" + std::to_string(i) + "]");
    if (!varUse(a->bufferMap[i].first.get(), b->bufferMap[i].first.get())) return false;
    if (!bufDef(a->bufferMap[i].second, b->bufferMap[i].second)) return false;
  }
  return at(".body", [&] { return stmt(a->body, b->body); }) && annotations(a->attrs, b->attrs, "attrs");
}

// --- Hashing: the same walk, with bound variables and buffers numbered by definition order ---

class Hasher {
public:
  explicit Hasher(bool mapFreeVars = false) : m_defineFree(mapFreeVars) {}
  uint64_t h = 0x9e3779b97f4a7c15ull;

  void add(uint64_t v) {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    h = (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  void add(const std::string& s) {
    add(s.size());
    add(std::hash<std::string>()(s));
  }
  void add(DataType t) { add((uint64_t(t.code()) << 32) | (uint64_t(t.bits()) << 16) | uint64_t(t.lanes())); }

  void expr(const Expr& e);
  void stmt(const Stmt& s);
  void func(const PrimFunc& f);

private:
  void exprs(const std::vector<Expr>& v) {
    add(v.size());
    for (auto& e : v) expr(e);
  }
  void varUse(const VarNode* v) {
    auto it = m_vars.find(v);
    if (it != m_vars.end()) {
      add(1);
      add(it->second);
      return;
    }
    add(v->dtype);
    if (m_defineFree) {
      size_t id = m_vars.size();
      m_vars[v] = id;
      add(1);
      add(id);
      return;
    }
    add(2);
    add(reinterpret_cast<uintptr_t>(v));
  }
  void varDef(const Var& v) {
    if (!v.defined()) {
      add(3);
      return;
    }
    add(v->dtype);
    auto it = m_vars.find(v.get());
    size_t id;
    if (it != m_vars.end()) {
      id = it->second;
    } else {
      id = m_vars.size();
      m_vars[v.get()] = id;
    }
    add(4);
    add(id);
  }
  void bufUse(const Buffer& b) {
    if (!b.defined()) {
      add(5);
      return;
    }
    auto it = m_bufs.find(b.get());
    if (it != m_bufs.end()) {
      add(6);
      add(it->second);
      return;
    }
    bufDef(b);
  }
  void bufDef(const Buffer& b) {
    if (!b.defined()) {
      add(5);
      return;
    }
    auto it = m_bufs.find(b.get());
    if (it != m_bufs.end()) {
      add(6);
      add(it->second);
      return;
    }
    add(b->dtype);
    add(b->scope);
    add(uint64_t(b->alignment));
    bool saved = m_defineFree;
    m_defineFree = true;
    varDef(b->data);
    exprs(b->shape);
    exprs(b->strides);
    if (isZeroOffset(b->elemOffset)) add(7);
    else expr(b->elemOffset);
    m_defineFree = saved;
    size_t id = m_bufs.size();
    m_bufs[b.get()] = id;
    add(6);
    add(id);
  }
  void annotations(const Annotations& a) {
    add(a.size());
    for (auto& [k, v] : a) {
      add(k);
      expr(v);
    }
  }
  void region(const BufferRegion& r) {
    bufUse(r.buffer);
    add(r.region.size());
    for (auto& rg : r.region) {
      expr(rg.min);
      expr(rg.extent);
    }
  }

  std::unordered_map<const VarNode*, size_t> m_vars;
  std::unordered_map<const BufferNode*, size_t> m_bufs;
  bool m_defineFree = false;
};

void Hasher::expr(const Expr& e) {
  if (!e.defined()) {
    add(0xdead);
    return;
  }
  add(uint64_t(e->nodeKind) + 100);
  add(e->dtype);
  switch (e->nodeKind) {
  case NodeKind::IntImm: add(uint64_t(e.as<IntImmNode>()->value)); break;
  case NodeKind::FloatImm: {
    double x = e.as<FloatImmNode>()->value;
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    add(bits);
    break;
  }
  case NodeKind::StringImm: add(e.as<StringImmNode>()->value); break;
  case NodeKind::Var: varUse(e.as<VarNode>()); break;
  case NodeKind::Cast: expr(e.as<CastNode>()->value); break;
  case NodeKind::Binary: {
    auto* n = e.as<BinaryNode>();
    add(uint64_t(n->op));
    expr(n->a);
    expr(n->b);
    break;
  }
  case NodeKind::Not: expr(e.as<NotNode>()->a); break;
  case NodeKind::Select: {
    auto* n = e.as<SelectNode>();
    expr(n->condition);
    expr(n->trueValue);
    expr(n->falseValue);
    break;
  }
  case NodeKind::Let: {
    auto* n = e.as<LetNode>();
    expr(n->value);
    varDef(n->var);
    expr(n->body);
    break;
  }
  case NodeKind::BufferLoad: {
    auto* n = e.as<BufferLoadNode>();
    bufUse(n->buffer);
    exprs(n->indices);
    break;
  }
  case NodeKind::Ramp: {
    auto* n = e.as<RampNode>();
    add(uint64_t(n->lanes));
    expr(n->base);
    expr(n->stride);
    break;
  }
  case NodeKind::Broadcast: {
    auto* n = e.as<BroadcastNode>();
    add(uint64_t(n->lanes));
    expr(n->value);
    break;
  }
  case NodeKind::Call: {
    auto* n = e.as<CallNode>();
    add(n->op);
    exprs(n->args);
    break;
  }
  default: break;
  }
}

void Hasher::stmt(const Stmt& s) {
  if (!s.defined()) {
    add(0xbeef);
    return;
  }
  add(uint64_t(s->nodeKind) + 200);
  switch (s->nodeKind) {
  case NodeKind::BufferStore: {
    auto* n = s.as<BufferStoreNode>();
    bufUse(n->buffer);
    expr(n->value);
    exprs(n->indices);
    break;
  }
  case NodeKind::LetStmt: {
    auto* n = s.as<LetStmtNode>();
    expr(n->value);
    varDef(n->var);
    stmt(n->body);
    break;
  }
  case NodeKind::AttrStmt: {
    auto* n = s.as<AttrStmtNode>();
    add(n->key);
    expr(n->node);
    expr(n->value);
    stmt(n->body);
    break;
  }
  case NodeKind::AssertStmt: {
    auto* n = s.as<AssertStmtNode>();
    add(n->message);
    expr(n->condition);
    stmt(n->body);
    break;
  }
  case NodeKind::Allocate: {
    auto* n = s.as<AllocateNode>();
    add(n->dtype);
    add(n->scope);
    exprs(n->extents);
    expr(n->condition);
    varDef(n->bufferVar);
    annotations(n->annotations);
    stmt(n->body);
    break;
  }
  case NodeKind::DeclBuffer: {
    auto* n = s.as<DeclBufferNode>();
    bufDef(n->buffer);
    stmt(n->body);
    break;
  }
  case NodeKind::SeqStmt: {
    auto& v = s.as<SeqStmtNode>()->seq;
    add(v.size());
    for (auto& x : v) stmt(x);
    break;
  }
  case NodeKind::IfThenElse: {
    auto* n = s.as<IfThenElseNode>();
    expr(n->condition);
    stmt(n->thenCase);
    stmt(n->elseCase);
    break;
  }
  case NodeKind::For: {
    auto* n = s.as<ForNode>();
    add(uint64_t(n->kind));
    add(n->threadTag);
    expr(n->min);
    expr(n->extent);
    varDef(n->loopVar);
    annotations(n->annotations);
    stmt(n->body);
    break;
  }
  case NodeKind::While: {
    auto* n = s.as<WhileNode>();
    expr(n->condition);
    stmt(n->body);
    break;
  }
  case NodeKind::Evaluate: expr(s.as<EvaluateNode>()->value); break;
  case NodeKind::Block: {
    auto* n = s.as<BlockNode>();
    add(n->name);
    add(n->iterVars.size());
    for (auto& iv : n->iterVars) {
      add(uint64_t(iv.iterType));
      expr(iv.dom.min);
      expr(iv.dom.extent);
      varDef(iv.var);
    }
    add(n->allocBuffers.size());
    for (auto& b : n->allocBuffers) bufDef(b);
    add(n->reads.size());
    for (auto& r : n->reads) region(r);
    add(n->writes.size());
    for (auto& r : n->writes) region(r);
    stmt(n->init);
    stmt(n->body);
    annotations(n->annotations);
    break;
  }
  case NodeKind::BlockRealize: {
    auto* n = s.as<BlockRealizeNode>();
    exprs(n->iterValues);
    expr(n->predicate);
    stmt(Stmt(n->block));
    break;
  }
  default: break;
  }
}

void Hasher::func(const PrimFunc& f) {
  if (!f.defined()) {
    add(0xf00d);
    return;
  }
  add(f->params.size());
  for (auto& p : f->params) varDef(p);
  add(f->bufferMap.size());
  for (auto& [v, b] : f->bufferMap) {
    varUse(v.get());
    bufDef(b);
  }
  stmt(f->body);
  annotations(f->attrs);
}

template <class T>
std::string diffOf(const T& a, const T& b, bool (Comparer::*m)(const T&, const T&), bool mapFreeVars = false) {
  Comparer c(mapFreeVars);
  if ((c.*m)(a, b)) return {};
  return c.diff.empty() ? std::string("<root>: differ") : c.diff;
}

}  // namespace

bool structuralEqual(const Expr& a, const Expr& b, bool mapFreeVars) { return Comparer(mapFreeVars).expr(a, b); }
bool structuralEqual(const Stmt& a, const Stmt& b, bool mapFreeVars) { return Comparer(mapFreeVars).stmt(a, b); }
bool structuralEqual(const PrimFunc& a, const PrimFunc& b) { return Comparer().func(a, b); }
bool structuralEqual(const IRModule& a, const IRModule& b) { return structuralDiff(a, b).empty(); }

size_t structuralHash(const Expr& e, bool mapFreeVars) {
  Hasher h(mapFreeVars);
  h.expr(e);
  return h.h;
}
size_t structuralHash(const Stmt& s, bool mapFreeVars) {
  Hasher h(mapFreeVars);
  h.stmt(s);
  return h.h;
}
size_t structuralHash(const PrimFunc& f) {
  Hasher h;
  h.func(f);
  return h.h;
}
size_t structuralHash(const IRModule& m) {
  Hasher h;
  h.add(m.functions.size());
  for (auto& [name, f] : m.functions) {
    h.add(name);
    h.add(uint64_t(structuralHash(f)));
  }
  return h.h;
}

std::string structuralDiff(const Expr& a, const Expr& b, bool mapFreeVars) {
  return diffOf(a, b, &Comparer::expr, mapFreeVars);
}
std::string structuralDiff(const Stmt& a, const Stmt& b, bool mapFreeVars) {
  return diffOf(a, b, &Comparer::stmt, mapFreeVars);
}
std::string structuralDiff(const PrimFunc& a, const PrimFunc& b) { return diffOf(a, b, &Comparer::func); }
std::string structuralDiff(const IRModule& a, const IRModule& b) {
  auto ia = a.functions.begin();
  auto ib = b.functions.begin();
  for (; ia != a.functions.end() && ib != b.functions.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return "module: function names: " + ia->first + " vs " + ib->first;
    std::string d = structuralDiff(ia->second, ib->second);
    if (!d.empty()) return "module[\"" + ia->first + "\"]" + d;
  }
  if (ia != a.functions.end()) return "module: function only on the left: " + ia->first;
  if (ib != b.functions.end()) return "module: function only on the right: " + ib->first;
  return {};
}

}  // namespace loom::tir
