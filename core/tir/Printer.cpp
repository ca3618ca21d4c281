// Prints TIR as TVMScript: names every variable and buffer uniquely and records statement lines.
#include "core/tir/Printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/tir/Intrinsics.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

LineRange PrintResult::linesOf(const Stmt& s) const {
  for (auto& [n, r] : stmtLines)
    if (n.same_as(s)) return r;
  return {};
}

std::string formatFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  return s;
}

namespace {

/// Names T.<name> that are not intrinsic calls; an intrinsic of one of these names prints as
/// T.call_intrin so that it parses back as a call.
const std::set<std::string>& reservedCallNames() {
  static const std::set<std::string> s = {
      "Cast", "Select", "Let", "Ramp", "Broadcast", "truncdiv", "truncmod", "floordiv", "floormod",
      "min", "max", "call_intrin", "And", "Or", "Not", "bool", "int8", "int16", "int32", "int64",
      "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64", "bfloat16", "handle",
      "Buffer", "evaluate", "grid", "serial", "parallel", "vectorized", "unroll", "thread_binding",
      "block", "axis", "reads", "writes", "where", "init", "alloc_buffer", "block_attr", "attr",
      "allocate", "decl_buffer", "LetStmt", "Assert", "func_attr", "prim_func"};
  return s;
}

const std::set<std::string>& pythonWords() {
  static const std::set<std::string> s = {
      "T", "I", "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
      "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if",
      "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
      "while", "with", "yield", "range"};
  return s;
}

bool isIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit((unsigned char)s[0])) return false;
  for (char c : s)
    if (!(std::isalnum((unsigned char)c) || c == '_')) return false;
  return true;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (c < 0x20 || c >= 0x7f) {
        char b[8];
        std::snprintf(b, sizeof b, "\\x%02x", c);
        out += b;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  return out + "\"";
}

/// Concatenation with the parts evaluated left to right (printing names variables as it goes).
std::string cat(std::initializer_list<std::string> parts) {
  std::string s;
  for (auto& p : parts) s += p;
  return s;
}

bool isIntValue(const Expr& e, int64_t v) {
  auto* i = e.as<IntImmNode>();
  return i && !i->dtype.isBool() && i->value == v;
}

bool isTrue(const Expr& e) {
  auto* i = e.as<IntImmNode>();
  return i && i->dtype.isBool() && i->value == 1;
}

bool containsBlock(const Stmt& s) {
  bool found = false;
  if (s.defined())
    postOrderVisit(s, [&](const IRNode* n) { found |= n->nodeKind == NodeKind::BlockRealize; });
  return found;
}

enum Prec { kOr = 1, kAnd, kNot, kCmp, kAdd, kMul, kUnary, kAtom };

int precOf(BinOp op) {
  switch (op) {
  case BinOp::Or: return kOr;
  case BinOp::And: return kAnd;
  case BinOp::Add:
  case BinOp::Sub: return kAdd;
  case BinOp::Mul:
  case BinOp::Div:
  case BinOp::FloorDiv:
  case BinOp::FloorMod: return kMul;
  default: return isComparison(op) ? kCmp : kAtom;
  }
}

class Printer {
public:
  explicit Printer(int baseIndent = 0) : m_indent(baseIndent) {}

  std::vector<std::string> lines;
  std::vector<std::pair<Stmt, LineRange>> map;

  // --- names ------------------------------------------------------------------------------
  std::string fresh(const std::string& hint) {
    std::string base;
    for (char c : hint) base += (std::isalnum((unsigned char)c) || c == '_') ? c : '_';
    if (base.empty()) base = "v";
    if (std::isdigit((unsigned char)base[0])) base = "v" + base;
    std::string name = base;
    if (pythonWords().count(name) || m_used.count(name)) {
      for (int k = 1;; ++k) {
        name = base + "_" + std::to_string(k);
        if (!m_used.count(name) && !pythonWords().count(name)) break;
      }
    }
    m_used.insert(name);
    return name;
  }
  std::string defineVar(const Var& v) {
    if (!v.defined()) return "_";
    auto it = m_varNames.find(v.get());
    if (it != m_varNames.end()) return it->second;
    return m_varNames[v.get()] = fresh(v->name);
  }
  /// A binding site (loop, let, allocate, axis): a variable bound a second time (non-SSA IR, e.g.
  /// one loop var reused by partitioned loops) gets a fresh name, so the text re-parses to the
  /// same text.
  std::string bindVar(const Var& v) {
    if (!v.defined()) return "_";
    auto it = m_varNames.find(v.get());
    if (it == m_varNames.end()) return defineVar(v);
    return it->second = fresh(v->name);
  }
  std::string useVar(const Var& v) {
    if (!v.defined()) return "None";
    auto it = m_varNames.find(v.get());
    if (it != m_varNames.end()) return it->second;
    std::string n = defineVar(v);
    m_freeVars.push_back(v);
    return n;
  }
  std::string defineBuffer(const Buffer& b) {
    if (!b.defined()) return "_";
    auto it = m_bufNames.find(b.get());
    if (it != m_bufNames.end()) return it->second;
    std::string n = m_bufNames[b.get()] = fresh(b->name);
    if (b->data.defined() && !m_varNames.count(b->data.get())) m_varNames[b->data.get()] = n + ".data";
    return n;
  }
  std::string useBuffer(const Buffer& b) {
    if (!b.defined()) return "None";
    auto it = m_bufNames.find(b.get());
    return it != m_bufNames.end() ? it->second : defineBuffer(b);
  }

  // --- expressions ------------------------------------------------------------------------
  std::string ex(const Expr& e, int ctx = 0) {
    int p = kAtom;
    std::string s = exPrec(e, p);
    return p < ctx ? "(" + s + ")" : s;
  }

  std::string args(const std::vector<Expr>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + ex(v[i]);
    return s;
  }

  std::string imm(DataType t, const std::string& v) { return "T." + t.str() + "(" + v + ")"; }

  std::string exPrec(const Expr& e, int& p) {
    p = kAtom;
    if (!e.defined()) return "None";
    switch (e->nodeKind) {
    case NodeKind::IntImm: {
      auto* n = e.as<IntImmNode>();
      if (n->dtype.isBool()) return n->value ? "True" : "False";
      if (n->dtype == DataType::Int(32)) {
        if (n->value < 0) p = kUnary;
        return std::to_string(n->value);
      }
      return imm(n->dtype, std::to_string(n->value));
    }
    case NodeKind::FloatImm: {
      auto* n = e.as<FloatImmNode>();
      std::string v = formatFloat(n->value);
      if (std::isnan(n->value) || std::isinf(n->value)) v = quote(v);
      return imm(n->dtype, v);
    }
    case NodeKind::StringImm: return quote(e.as<StringImmNode>()->value);
    case NodeKind::Var: return useVar(Var(e.as<VarNode>()));
    case NodeKind::Cast: {
      auto* n = e.as<CastNode>();
      return "T.Cast(" + quote(n->dtype.str()) + ", " + ex(n->value) + ")";
    }
    case NodeKind::Binary: {
      auto* n = e.as<BinaryNode>();
      const char* sym = binOpSymbol(n->op);
      if (n->op == BinOp::Div && n->dtype.isFloat()) sym = "/";
      if (!sym) return cat({std::string("T.") + binOpName(n->op) + "(", ex(n->a), ", ", ex(n->b), ")"});
      p = precOf(n->op);
      if (n->op == BinOp::Div) p = kMul;
      int lctx = p, rctx = p + 1;
      if (p == kCmp) lctx = kCmp + 1;
      return cat({ex(n->a, lctx), std::string(" ") + sym + " ", ex(n->b, rctx)});
    }
    case NodeKind::Not: p = kNot; return "not " + ex(e.as<NotNode>()->a, kNot);
    case NodeKind::Select: {
      auto* n = e.as<SelectNode>();
      return cat({"T.Select(", ex(n->condition), ", ", ex(n->trueValue), ", ", ex(n->falseValue), ")"});
    }
    case NodeKind::Let: {
      auto* n = e.as<LetNode>();
      std::string value = ex(n->value);
      std::string name = n->var.defined() ? bindVar(n->var) : "None";
      return "T.Let(" + name + ", " + value + ", " + ex(n->body) + ")";
    }
    case NodeKind::BufferLoad: {
      auto* n = e.as<BufferLoadNode>();
      return cat({useBuffer(n->buffer), "[", n->indices.empty() ? "()" : args(n->indices), "]"});
    }
    case NodeKind::Ramp: {
      auto* n = e.as<RampNode>();
      return cat({"T.Ramp(", ex(n->base), ", ", ex(n->stride), ", " + std::to_string(n->lanes) + ")"});
    }
    case NodeKind::Broadcast: {
      auto* n = e.as<BroadcastNode>();
      return "T.Broadcast(" + ex(n->value) + ", " + std::to_string(n->lanes) + ")";
    }
    case NodeKind::Call: {
      auto* n = e.as<CallNode>();
      bool shortForm = isIdentifier(n->op) && !reservedCallNames().count(n->op) &&
                       findIntrinsic(n->op) && !n->args.empty();
      if (shortForm) {
        size_t typeArg = n->op == "if_then_else" && n->args.size() == 3 ? 1 : 0;
        shortForm = n->args[typeArg].defined() && n->args[typeArg].dtype() == n->dtype;
      }
      if (shortForm) return "T." + n->op + "(" + args(n->args) + ")";
      std::string s = "T.call_intrin(" + quote(n->dtype.str()) + ", " + quote(n->op);
      for (auto& a : n->args) s += ", " + ex(a);
      return s + ")";
    }
    default: return "None";
    }
  }

  /// The exclusive end of [min, min+extent): folded for constants, else the sum min + extent.
  std::string endOf(const Expr& min, const Expr& extent) {
    auto* a = min.as<IntImmNode>();
    auto* b = extent.as<IntImmNode>();
    if (a && b && a->dtype == b->dtype && !a->dtype.isBool())
      return ex(intImm(a->dtype, a->value + b->value));
    if (!min.defined() || !extent.defined()) return ex(extent);
    return ex(Expr(new BinaryNode(min.dtype(), BinOp::Add, min, extent)));
  }

  std::string range(const Range& r) {
    if (auto* e = r.extent.as<IntImmNode>())
      if (e->value == 1 && !e->dtype.isBool() && r.min.defined() && e->dtype == r.min.dtype())
        return ex(r.min);
    if (isIntValue(r.min, 0)) return cat({ex(r.min), ":", ex(r.extent)});
    return cat({ex(r.min), ":", endOf(r.min, r.extent)});
  }

  std::string region(const BufferRegion& br) {
    std::string s = useBuffer(br.buffer) + "[";
    if (br.region.empty()) s += "()";
    for (size_t i = 0; i < br.region.size(); ++i) s += (i ? ", " : "") + range(br.region[i]);
    return s + "]";
  }

  std::string annValue(const Expr& e) {
    if (auto* i = e.as<IntImmNode>())
      if (i->dtype.isBool()) return i->value ? "T.bool(True)" : "T.bool(False)";
    return ex(e);
  }
  std::string annotations(const Annotations& a) {
    std::string s = "{";
    bool first = true;
    for (auto& [k, v] : a) {
      s += (first ? "" : ", ") + quote(k) + ": " + annValue(v);
      first = false;
    }
    return s + "}";
  }

  std::string tuple(const std::vector<Expr>& v) {
    if (v.size() == 1) return "(" + ex(v[0]) + ",)";
    return "(" + args(v) + ")";
  }

  /// shape, dtype and the keyword arguments that differ from the defaults.
  std::string bufferArgs(const Buffer& b, bool withData) {
    if (!b.defined()) return "()";
    std::string s = tuple(b->shape) + ", " + quote(b->dtype.str());
    if (withData && b->data.defined() && m_varNames.count(b->data.get()))
      s += ", data=" + m_varNames[b->data.get()];
    if (!b->strides.empty()) s += ", strides=" + tuple(b->strides);
    if (!(isIntValue(b->elemOffset, 0) && b->elemOffset.dtype() == DataType::Int(32)))
      s += ", elem_offset=" + ex(b->elemOffset);
    if (b->scope != "global") s += ", scope=" + quote(b->scope);
    if (b->alignment != 64) s += ", align=" + std::to_string(b->alignment);
    return s;
  }

  // --- statements -------------------------------------------------------------------------
  void line(const std::string& s) { lines.push_back(std::string(m_indent * 4, ' ') + s); }
  int nextLine() const { return static_cast<int>(lines.size()) + 1; }
  void record(const Stmt& s, int first) {
    int last = std::max(first, static_cast<int>(lines.size()));
    map.emplace_back(s, LineRange{first, last});
  }

  /// Prints `s` as an indented suite (one level deeper), "pass" when it prints nothing.
  void suite(const Stmt& s, const std::vector<Buffer>& views = {}) {
    ++m_indent;
    size_t before = lines.size();
    emitViews(views);
    stmtList(s);
    if (lines.size() == before) line("pass");
    --m_indent;
  }

  // Buffers that statements use but nothing declares (no parameter, alloc_buffer or DeclBuffer)
  // print as `X = T.Buffer(..., data=ptr)` views: right after the Allocate or LetStmt that binds
  // their data pointer, or at the top of the function body.
  void planViews(const PrimFunc& f) {
    std::unordered_set<const BufferNode*> declared, seen;
    std::unordered_set<const VarNode*> binders;
    std::vector<Buffer> used;
    for (auto& [p, b] : f->bufferMap) declared.insert(b.get());
    auto use = [&](const Buffer& b) {
      if (b.defined() && seen.insert(b.get()).second) used.push_back(b);
    };
    if (!f->body.defined()) return;
    postOrderVisit(f->body, [&](const IRNode* n) {
      switch (n->nodeKind) {
      case NodeKind::Allocate: binders.insert(static_cast<const AllocateNode*>(n)->bufferVar.get()); break;
      case NodeKind::LetStmt: binders.insert(static_cast<const LetStmtNode*>(n)->var.get()); break;
      case NodeKind::DeclBuffer: declared.insert(static_cast<const DeclBufferNode*>(n)->buffer.get()); break;
      case NodeKind::BufferLoad: use(static_cast<const BufferLoadNode*>(n)->buffer); break;
      case NodeKind::BufferStore: use(static_cast<const BufferStoreNode*>(n)->buffer); break;
      case NodeKind::Block: {
        auto* b = static_cast<const BlockNode*>(n);
        for (auto& a : b->allocBuffers) declared.insert(a.get());
        for (auto& r : b->reads) use(r.buffer);
        for (auto& r : b->writes) use(r.buffer);
        break;
      }
      default: break;
      }
    });
    for (auto& b : used) {
      if (declared.count(b.get())) continue;
      if (b->data.defined() && binders.count(b->data.get())) m_viewsByBinder[b->data.get()].push_back(b);
      else m_topViews.push_back(b);
    }
  }
  void emitViews(const std::vector<Buffer>& views) {
    for (auto& b : views) {
      if (m_bufNames.count(b.get())) continue;
      std::string a = "T.Buffer(" + bufferArgs(b, true) + ")";
      line(defineBuffer(b) + " = " + a);
    }
  }
  std::vector<Buffer> viewsOf(const Var& binder) {
    auto it = binder.defined() ? m_viewsByBinder.find(binder.get()) : m_viewsByBinder.end();
    return it == m_viewsByBinder.end() ? std::vector<Buffer>{} : it->second;
  }

  void stmtList(const Stmt& s) {
    if (!s.defined()) return;
    if (auto* q = s.as<SeqStmtNode>()) {
      int first = nextLine();
      for (size_t i = 0; i < q->seq.size(); ++i) stmt(q->seq[i], i + 1 == q->seq.size());
      record(s, first);
      return;
    }
    stmt(s, true);
  }

  void stmt(const Stmt& s, bool tail) {
    if (!s.defined()) return;
    int first = nextLine();
    switch (s->nodeKind) {
    case NodeKind::SeqStmt: stmtList(s); return;
    case NodeKind::BufferStore: {
      auto* n = s.as<BufferStoreNode>();
      line(cat({useBuffer(n->buffer), "[", n->indices.empty() ? "()" : args(n->indices), "] = ", ex(n->value)}));
      break;
    }
    case NodeKind::Evaluate: line("T.evaluate(" + ex(s.as<EvaluateNode>()->value) + ")"); break;
    case NodeKind::LetStmt: {
      auto* n = s.as<LetStmtNode>();
      std::string value = ex(n->value);
      std::string name = bindVar(n->var);
      if (tail) {
        line(name + ": T." + (n->var.defined() ? n->var->dtype.str() : std::string("int32")) + " = " + value);
        emitViews(viewsOf(n->var));
        stmtList(n->body);
      } else {
        line("with T.LetStmt(" + value + ") as " + name + ":");
        suite(n->body, viewsOf(n->var));
      }
      break;
    }
    case NodeKind::AttrStmt: {
      auto* n = s.as<AttrStmtNode>();
      line(cat({"with T.attr(", ex(n->node), ", " + quote(n->key) + ", ", ex(n->value), "):"}));
      suite(n->body);
      break;
    }
    case NodeKind::AssertStmt: {
      auto* n = s.as<AssertStmtNode>();
      if (tail) {
        line("assert " + ex(n->condition) + ", " + quote(n->message));
        stmtList(n->body);
      } else {
        line("with T.Assert(" + ex(n->condition) + ", " + quote(n->message) + "):");
        suite(n->body);
      }
      break;
    }
    case NodeKind::Allocate: {
      auto* n = s.as<AllocateNode>();
      std::string a = "T.allocate([" + args(n->extents) + "], " + quote(n->dtype.str()) + ", " +
                      quote(n->scope);
      if (!isTrue(n->condition)) a += ", condition=" + ex(n->condition);
      if (!n->annotations.empty()) a += ", annotations=" + annotations(n->annotations);
      a += ")";
      std::string name = bindVar(n->bufferVar);
      if (tail) {
        line(name + " = " + a);
        emitViews(viewsOf(n->bufferVar));
        stmtList(n->body);
      } else {
        line("with " + a + " as " + name + ":");
        suite(n->body, viewsOf(n->bufferVar));
      }
      break;
    }
    case NodeKind::DeclBuffer: {
      auto* n = s.as<DeclBufferNode>();
      std::string a = "T.decl_buffer(" + bufferArgs(n->buffer, true) + ")";
      std::string name = defineBuffer(n->buffer);
      if (tail) {
        line(name + " = " + a);
        stmtList(n->body);
      } else {
        line("with " + a + " as " + name + ":");
        suite(n->body);
      }
      break;
    }
    case NodeKind::IfThenElse: {
      auto* n = s.as<IfThenElseNode>();
      line("if " + ex(n->condition) + ":");
      suite(n->thenCase);
      if (n->elseCase.defined()) {
        line("else:");
        suite(n->elseCase);
      }
      break;
    }
    case NodeKind::While: {
      auto* n = s.as<WhileNode>();
      line("while " + ex(n->condition) + ":");
      suite(n->body);
      break;
    }
    case NodeKind::For: forLoop(s); return;
    case NodeKind::BlockRealize: {
      auto* n = s.as<BlockRealizeNode>();
      block(n->block, n, first);
      map.emplace_back(s, LineRange{first, std::max(first, (int)lines.size())});
      return;
    }
    case NodeKind::Block: block(Block(s.as<BlockNode>()), nullptr, first); return;
    default: break;
    }
    record(s, first);
  }

  static bool plainGridLoop(const ForNode* f) {
    return f->kind == ForKind::Serial && f->annotations.empty() && f->extent.defined() &&
           isIntValue(f->min, 0) && f->min.dtype() == f->extent.dtype() && f->loopVar.defined() &&
           f->loopVar->dtype == f->extent.dtype();
  }

  void forLoop(const Stmt& s) {
    int first = nextLine();
    std::vector<const ForNode*> chain{s.as<ForNode>()};
    std::vector<Stmt> stmts{s};
    if (plainGridLoop(chain[0])) {
      while (auto* inner = chain.back()->body.as<ForNode>()) {
        if (!plainGridLoop(inner)) break;
        bool dependent = false;
        for (auto* f : chain) dependent |= usesVar(inner->extent, f->loopVar);
        if (dependent) break;
        stmts.push_back(chain.back()->body);
        chain.push_back(inner);
      }
    }
    if (chain.size() >= 2) {
      std::string ext, names;
      for (size_t i = 0; i < chain.size(); ++i) ext += (i ? ", " : "") + ex(chain[i]->extent);
      for (size_t i = 0; i < chain.size(); ++i) {
        names += (i ? ", " : "") + bindVar(chain[i]->loopVar);
        m_loopDom[chain[i]->loopVar.get()] = chain[i];
      }
      line("for " + names + " in T.grid(" + ext + "):");
      suite(chain.back()->body);
      for (size_t i = 0; i < chain.size(); ++i) {
        m_loopDom.erase(chain[i]->loopVar.get());
        record(stmts[i], first);
      }
      return;
    }
    auto* f = chain[0];
    std::string it;
    if (plainGridLoop(f)) {
      it = "range(" + ex(f->extent) + ")";
    } else {
      it = std::string("T.") + forKindName(f->kind) + "(";
      if (isIntValue(f->min, 0) && f->extent.defined() && f->min.dtype() == f->extent.dtype())
        it += ex(f->extent);
      else
        it += cat({ex(f->min), ", ", endOf(f->min, f->extent)});
      if (f->kind == ForKind::ThreadBinding) it += ", thread=" + quote(f->threadTag);
      if (!f->annotations.empty()) it += ", annotations=" + annotations(f->annotations);
      it += ")";
    }
    std::string name = f->loopVar.defined() ? bindVar(f->loopVar) : "_";
    line("for " + name + " in " + it + ":");
    if (f->loopVar.defined()) m_loopDom[f->loopVar.get()] = f;
    suite(f->body);
    if (f->loopVar.defined()) m_loopDom.erase(f->loopVar.get());
    record(s, first);
  }

  /// The T.axis.remap kind ('S' or 'R') of iter var `i`, or 0 when it must print on its own line:
  /// TVM's rule, a spatial/reduce var bound to an enclosing loop var over [0, extent) whose
  /// domain is that same [0, extent).
  char remapKind(const BlockNode* b, const BlockRealizeNode* r, size_t i) {
    if (!r || i >= r->iterValues.size()) return 0;
    auto& iv = b->iterVars[i];
    auto* v = r->iterValues[i].as<VarNode>();
    if (!v || !iv.var.defined()) return 0;
    auto it = m_loopDom.find(v);
    if (it == m_loopDom.end()) return 0;
    const ForNode* f = it->second;
    if (!isIntValue(f->min, 0) || !iv.dom.extent.defined() || !isIntValue(iv.dom.min, 0) ||
        iv.dom.min.dtype() != iv.dom.extent.dtype() || iv.var->dtype != v->dtype ||
        !structuralEqual(iv.dom.extent, f->extent))
      return 0;
    if (iv.iterType == IterType::DataPar) return 'S';
    if (iv.iterType == IterType::CommReduce) return 'R';
    return 0;
  }

  /// Runs of remappable iter vars print as one T.axis.remap line each; the others one per line.
  void axes(const BlockNode* b, const BlockRealizeNode* r) {
    std::vector<size_t> run;
    std::string kinds;
    auto flush = [&] {
      if (run.empty()) return;
      std::string vals, names;
      for (size_t k = 0; k < run.size(); ++k) vals += (k ? ", " : "") + ex(r->iterValues[run[k]]);
      for (size_t k = 0; k < run.size(); ++k) names += (k ? ", " : "") + bindVar(b->iterVars[run[k]].var);
      line(names + " = T.axis.remap(" + quote(kinds) + ", [" + vals + "])");
      run.clear();
      kinds.clear();
    };
    for (size_t i = 0; i < b->iterVars.size(); ++i) {
      if (char k = remapKind(b, r, i)) {
        run.push_back(i);
        kinds += k;
        continue;
      }
      flush();
      auto& iv = b->iterVars[i];
      std::string dom = isIntValue(iv.dom.min, 0) && iv.dom.extent.defined() &&
                                iv.dom.min.dtype() == iv.dom.extent.dtype()
                            ? ex(iv.dom.extent)
                            : cat({"(", ex(iv.dom.min), ", ", endOf(iv.dom.min, iv.dom.extent), ")"});
      std::string a = std::string("T.axis.") + iterTypeName(iv.iterType) + "(" + dom;
      if (r && i < r->iterValues.size()) a += ", " + ex(r->iterValues[i]);
      a += ")";
      line((iv.var.defined() ? bindVar(iv.var) : "_") + " = " + a);
    }
    flush();
  }

  void block(const Block& b, const BlockRealizeNode* r, int first) {
    if (!b.defined()) return;
    std::string head = "with T.block(" + quote(b->name) + (r ? "" : ", no_realize=True") + "):";
    line(head);
    ++m_indent;
    axes(b.get(), r);
    if (r && !isTrue(r->predicate)) line("T.where(" + ex(r->predicate) + ")");
    bool bareRoot = b->name == "root" && b->iterVars.empty() && b->reads.empty() && b->writes.empty();
    if (!bareRoot) {
      std::string rd, wr;
      for (size_t i = 0; i < b->reads.size(); ++i) rd += (i ? ", " : "") + region(b->reads[i]);
      for (size_t i = 0; i < b->writes.size(); ++i) wr += (i ? ", " : "") + region(b->writes[i]);
      line("T.reads(" + rd + ")");
      line("T.writes(" + wr + ")");
    }
    if (!b->annotations.empty()) line("T.block_attr(" + annotations(b->annotations) + ")");
    for (auto& ab : b->allocBuffers) {
      if (!ab.defined()) continue;
      std::string a = "T.alloc_buffer(" + bufferArgs(ab, false) + ")";
      line(defineBuffer(ab) + " = " + a);
    }
    if (b->init.defined()) {
      line("with T.init():");
      suite(b->init);
    }
    size_t before = lines.size();
    stmtList(b->body);
    if (lines.size() == before && !b->body.defined()) line("pass");
    --m_indent;
    record(Stmt(b.get()), first);
  }

  // --- functions --------------------------------------------------------------------------
  void func(const PrimFunc& f) {
    line("@T.prim_func");
    std::vector<std::string> params;
    for (auto& p : f->params)
      if (p.defined() && !f->bufferOf(p).defined()) defineVar(p);
    for (auto& p : f->params) {
      if (!p.defined()) continue;
      Buffer b = f->bufferOf(p);
      if (b.defined()) {
        std::string name = defineBuffer(b);
        m_varNames[p.get()] = name;
        params.push_back(name + ": T.Buffer(" + bufferArgs(b, false) + ")");
      } else {
        params.push_back(m_varNames[p.get()] + ": T." + p->dtype.str());
      }
    }
    std::string sig;
    for (size_t i = 0; i < params.size(); ++i) sig += (i ? ", " : "") + params[i];
    line("def " + (isIdentifier(f->name) ? f->name : std::string("func")) + "(" + sig + "):");
    ++m_indent;
    if (!f->attrs.empty()) line("T.func_attr(" + annotations(f->attrs) + ")");
    size_t declAt = lines.size();
    planViews(f);
    emitViews(m_topViews);
    Stmt body = f->body;
    auto* root = body.as<BlockRealizeNode>();
    bool elide = root && root->iterValues.empty() && isTrue(root->predicate) && root->block.defined() &&
                 root->block->name == "root" && root->block->iterVars.empty() &&
                 root->block->reads.empty() && root->block->writes.empty() &&
                 !root->block->init.defined() && root->block->allocBuffers.empty() &&
                 root->block->annotations.empty() && containsBlock(root->block->body);
    if (elide) {
      int first = nextLine();
      line("# with T.block(\"root\"):");
      size_t before = lines.size();
      stmtList(root->block->body);
      if (lines.size() == before) line("pass");
      record(Stmt(root->block.get()), first);
      record(body, first);
    } else {
      size_t before = lines.size();
      stmtList(body);
      if (lines.size() == before) line("pass");
    }
    // Free variables (symbolic shapes, ...) are declared before the body: `n = T.int32()`.
    std::vector<std::string> decls;
    for (size_t i = 0; i < m_freeVars.size(); ++i)
      decls.push_back(std::string(m_indent * 4, ' ') + m_varNames[m_freeVars[i].get()] + " = T." +
                      m_freeVars[i]->dtype.str() + "()");
    if (!decls.empty()) {
      lines.insert(lines.begin() + declAt, decls.begin(), decls.end());
      int shift = static_cast<int>(decls.size());
      for (auto& [st, r] : map) {
        if (r.first > (int)declAt) r.first += shift;
        if (r.last > (int)declAt) r.last += shift;
      }
    }
    --m_indent;
  }

  std::string text() const {
    std::string s;
    for (auto& l : lines) s += l + "\n";
    return s;
  }

private:
  int m_indent = 0;
  std::set<std::string> m_used;
  std::unordered_map<const VarNode*, std::string> m_varNames;
  std::unordered_map<const BufferNode*, std::string> m_bufNames;
  std::vector<Var> m_freeVars;
  std::unordered_map<const VarNode*, std::vector<Buffer>> m_viewsByBinder;
  std::vector<Buffer> m_topViews;
  std::unordered_map<const VarNode*, const ForNode*> m_loopDom;
};

}  // namespace

PrintResult printWithMap(const PrimFunc& f) {
  PrintResult r;
  if (!f.defined()) return r;
  Printer p;
  p.lines.push_back("# from tvm.script import tir as T");
  p.lines.push_back("");
  p.func(f);
  r.text = p.text();
  r.stmtLines = std::move(p.map);
  return r;
}

std::string printFunc(const PrimFunc& f) { return printWithMap(f).text; }

std::string printModule(const IRModule& m) {
  std::string s = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n";
  s += "@I.ir_module\nclass Module:\n";
  bool first = true;
  for (auto& [name, f] : m.functions) {
    if (!f.defined()) continue;
    if (!first) s += "\n";
    first = false;
    Printer p(1);
    p.func(f);
    s += p.text();
  }
  if (first) s += "    pass\n";
  return s;
}

std::string printExpr(const Expr& e) {
  Printer p;
  return p.ex(e);
}

std::string printStmt(const Stmt& s) {
  Printer p;
  p.stmtList(s);
  return p.text();
}

}  // namespace loom::tir
