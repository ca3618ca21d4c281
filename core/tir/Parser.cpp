// Recursive-descent parser of the TVMScript subset; builds TIR nodes that carry source spans.
#include "core/tir/Parser.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <unordered_map>

#include "core/support/Error.h"
#include "core/tir/Intrinsics.h"
#include "core/tir/Lexer.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

namespace {

/// What a name in scope stands for.
struct Entry {
  Var var;
  Buffer buf;
};

/// The header of the block being parsed (or of the function top, which may hold alloc_buffers).
struct BlockCtx {
  bool functionTop = false;
  bool realize = true;
  std::vector<IterVar> iterVars;
  std::vector<Expr> values;
  Expr predicate;
  size_t predicateTok = 0;  ///< token index of T.where, for errors
  std::vector<size_t> valueToks;  ///< token index of each axis value
  std::vector<BufferRegion> reads, writes;
  bool readsGiven = false, writesGiven = false;  ///< T.reads / T.writes written out
  Annotations annotations;
  std::vector<Buffer> allocBuffers;
  Stmt init;
  Annotations* funcAttrs = nullptr;
  PrimFuncNode* func = nullptr;  ///< at function level: where T.match_buffer adds its buffer
};

/// The regions a block body reads and writes, in order of first access, for a block that leaves
/// out T.reads / T.writes. An index that uses a variable bound inside the body (an inner loop, a
/// let, a nested block's iter var) or a vector index covers its whole dimension; accesses of one
/// buffer at different indices merge to the whole dimension too (a safe over-approximation).
/// Loads of a buffer the block writes are not reads when the block has an init (the reduction
/// update, as create_prim_func does); buffers the block allocates are left out.
class AccessCollector : public IRVisitor {
public:
  std::vector<BufferRegion> reads, writes;
  std::set<const VarNode*> inner;

  void add(std::vector<BufferRegion>& list, const Buffer& b, const std::vector<Expr>& idx) {
    std::vector<Range> region;
    for (size_t d = 0; d < b->shape.size(); ++d) {
      const Expr* e = d < idx.size() ? &idx[d] : nullptr;
      bool local = e && e->dtype().lanes() == 1 && !usesInner(*e);
      region.push_back(local ? Range(*e, intImm(e->dtype(), 1)) : Range(intImm(b->shape[d].dtype(), 0), b->shape[d]));
    }
    for (auto& r : list) {
      if (!r.buffer.same_as(b)) continue;
      for (size_t d = 0; d < region.size() && d < r.region.size(); ++d)
        if (!structuralEqual(r.region[d].min, region[d].min) || !structuralEqual(r.region[d].extent, region[d].extent))
          r.region[d] = Range(intImm(b->shape[d].dtype(), 0), b->shape[d]);
      return;
    }
    list.emplace_back(b, region);
  }

  bool usesInner(const Expr& e) const {
    bool found = false;
    postOrderVisit(e, [&](const IRNode* x) {
      if (auto* v = dynamic_cast<const VarNode*>(x)) found |= inner.count(v) > 0;
    });
    return found;
  }

protected:
  using IRVisitor::visit;
  void visit(const BufferLoadNode* n) override {
    IRVisitor::visit(n);
    add(reads, n->buffer, n->indices);
  }
  void visit(const BufferStoreNode* n) override {
    IRVisitor::visit(n);
    add(writes, n->buffer, n->indices);
  }
};

/// Collects the variables bound inside a statement.
class BoundVars : public IRVisitor {
public:
  std::set<const VarNode*> vars;

protected:
  using IRVisitor::visit;
  void visit(const ForNode* n) override {
    vars.insert(n->loopVar.get());
    IRVisitor::visit(n);
  }
  void visit(const LetStmtNode* n) override {
    vars.insert(n->var.get());
    IRVisitor::visit(n);
  }
  void visit(const LetNode* n) override {
    vars.insert(n->var.get());
    IRVisitor::visit(n);
  }
  void visit(const BlockNode* n) override {
    for (auto& iv : n->iterVars) vars.insert(iv.var.get());
    IRVisitor::visit(n);
  }
};

std::pair<std::vector<BufferRegion>, std::vector<BufferRegion>> inferAccessRegions(const Stmt& body, const Stmt& init,
                                                                                   const std::vector<Buffer>& allocated) {
  BoundVars bound;
  bound.visitStmt(body);
  if (init.defined()) bound.visitStmt(init);
  AccessCollector c;
  c.inner = std::move(bound.vars);
  c.visitStmt(body);
  if (init.defined()) c.visitStmt(init);
  auto keep = [&](const BufferRegion& r, bool isRead) {
    for (auto& a : allocated)
      if (a.same_as(r.buffer)) return false;
    if (isRead && init.defined())
      for (auto& w : c.writes)
        if (w.buffer.same_as(r.buffer)) return false;
    return true;
  };
  std::vector<BufferRegion> reads, writes;
  for (auto& r : c.reads)
    if (keep(r, true)) reads.push_back(r);
  for (auto& w : c.writes)
    if (keep(w, false)) writes.push_back(w);
  return {reads, writes};
}

/// T.Buffer / T.decl_buffer / T.alloc_buffer arguments before the buffer gets its name.
struct BufferSpec {
  std::vector<Expr> shape;
  DataType dtype = DataType::Float(32);
  Var data;
  std::vector<Expr> strides;
  Expr elemOffset;
  bool elemOffsetNone = false;  ///< elem_offset=None: leave it undefined
  std::string scope = "global";
  int align = 64;
};

bool isIntLiteral(const Expr& e, int64_t v) {
  auto* i = e.as<IntImmNode>();
  return i && !i->dtype.isBool() && i->value == v;
}

class Parser {
public:
  Parser(const std::string& text, const std::string& fileName)
      : m_file(std::make_shared<const std::string>(fileName)) {
    m_t = tokenize(text, m_file);
  }

  Span currentSpan() const { return spanAt(peek()); }

  std::vector<PrimFunc> parseTop() {
    std::vector<PrimFunc> fns;
    skipImports();
    if (peek().isOp("@") && peek(1).isName("I")) {
      next();
      next();
      expectOp(".", "after '@I'");
      const Token& d = expectName("after '@I.'");
      if (d.text != "ir_module") fail(d, "expected '@I.ir_module', found '@I." + d.text + "'");
      expectNewline("after '@I.ir_module'");
      const Token& c = expectName("after '@I.ir_module'");
      if (c.text != "class") fail(c, "expected 'class' after '@I.ir_module', found " + describeToken(c));
      expectName("as the module class name");
      expectOp(":", "after the class name");
      expectNewline("after 'class ...:'");
      if (peek().kind != TokenKind::Indent) fail(peek(), "expected an indented class body");
      next();
      while (peek().kind != TokenKind::Dedent && peek().kind != TokenKind::End) {
        if (peek().isName("pass")) {
          next();
          expectNewline("after 'pass'");
          continue;
        }
        fns.push_back(parseFuncDef());
      }
      if (peek().kind == TokenKind::Dedent) next();
    } else {
      while (peek().kind != TokenKind::End) fns.push_back(parseFuncDef());
    }
    if (peek().kind != TokenKind::End) fail(peek(), "unexpected " + describeToken(peek()) + " after the module");
    return fns;
  }

  Expr parseStandaloneExpr(const std::vector<Var>& vars, const std::vector<Buffer>& bufs) {
    m_scopes.emplace_back();
    for (auto& v : vars)
      if (v.defined()) m_scopes.back()[v->name] = Entry{v, {}};
    for (auto& b : bufs)
      if (b.defined()) m_scopes.back()[b->name] = Entry{{}, b};
    if (peek().kind == TokenKind::End) fail(peek(), "expected an expression");
    Expr e = parseExpr();
    if (peek().kind == TokenKind::Newline) next();
    if (peek().kind != TokenKind::End) fail(peek(), "unexpected " + describeToken(peek()) + " after the expression");
    return e;
  }

private:
  // --- tokens -----------------------------------------------------------------------------
  const Token& peek(size_t k = 0) const { return m_t[std::min(m_p + k, m_t.size() - 1)]; }
  const Token& next() {
    const Token& t = m_t[std::min(m_p, m_t.size() - 1)];
    if (m_p + 1 < m_t.size()) ++m_p;
    return t;
  }
  bool acceptOp(const char* s) {
    if (!peek().isOp(s)) return false;
    next();
    return true;
  }
  const Token& expectOp(const char* s, const std::string& context) {
    if (!peek().isOp(s)) fail(peek(), std::string("expected '") + s + "' " + context + ", found " + describeToken(peek()));
    return next();
  }
  const Token& expectName(const std::string& context) {
    if (peek().kind != TokenKind::Name) fail(peek(), "expected a name " + context + ", found " + describeToken(peek()));
    return next();
  }
  void expectKeyword(const char* kw, const std::string& context) {
    if (!peek().isName(kw)) fail(peek(), std::string("expected '") + kw + "' " + context + ", found " + describeToken(peek()));
    next();
  }
  const Token& expectString(const std::string& context) {
    if (peek().kind != TokenKind::String) fail(peek(), "expected a string " + context + ", found " + describeToken(peek()));
    return next();
  }
  void expectNewline(const std::string& context) {
    if (peek().kind == TokenKind::End) return;
    if (peek().kind != TokenKind::Newline) fail(peek(), "expected end of line " + context + ", found " + describeToken(peek()));
    next();
  }

  Span spanAt(const Token& t) const {
    Span s;
    s.file = m_file;
    s.line = t.line;
    s.column = t.column;
    s.endLine = t.endLine;
    s.endColumn = t.endColumn;
    return s;
  }
  /// From `t` to the last consumed token.
  Span spanFrom(const Token& t) const {
    Span s = spanAt(t);
    size_t k = m_p;
    while (k > 0 && (m_t[k - 1].kind == TokenKind::Newline || m_t[k - 1].kind == TokenKind::Indent ||
                     m_t[k - 1].kind == TokenKind::Dedent))
      --k;
    if (k > 0) {
      const Token& last = m_t[k - 1];
      if (last.line > t.line || (last.line == t.line && last.endColumn >= t.column)) {
        s.endLine = last.endLine;
        s.endColumn = last.endColumn;
      }
    }
    return s;
  }

  [[noreturn]] void fail(const Token& t, const std::string& msg) const {
    LOOM_THROW_AT(ParseError, spanAt(t)) << msg;
  }

  /// Runs a builder, turning its typed errors into ParseErrors at `t`.
  template <class F> auto guard(const Token& t, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      fail(t, e.what());
    }
  }

  /// Bounds recursion so hostile input cannot overflow the stack: expressions nest at most 250
  /// deep; statements (a flat `x = ...` binding nests everything after it) 1000 deep.
  struct Depth {
    int& counter;
    Depth(Parser& p, const Token& t, bool stmt = false) : counter(stmt ? p.m_stmtDepth : p.m_depth) {
      if (++counter > (stmt ? 1000 : 250))
        p.fail(t, stmt ? "statements nested too deeply" : "expression nested too deeply");
    }
    ~Depth() { --counter; }
  };

  template <class N, class... A> Expr mk(const Token& t, A&&... a) {
    auto* n = new N(std::forward<A>(a)...);
    n->span = spanFrom(t);
    return Expr(n);
  }
  template <class N, class... A> Stmt mkS(const Token& t, A&&... a) {
    auto* n = new N(std::forward<A>(a)...);
    n->span = spanFrom(t);
    return Stmt(n);
  }
  Expr spanned(const Token& t, const Expr& e) {
    if (!e.defined() || e.as<VarNode>()) return e;
    return withSpan(e, spanFrom(t));
  }
  Var newVar(const Token& t, const std::string& name, DataType dtype) {
    auto* n = new VarNode(name, dtype);
    n->span = spanAt(t);
    return Var(n);
  }
  Stmt makeSeq(const Token& t, std::vector<Stmt> stmts) {
    Stmt s = seq(std::move(stmts));
    if (auto* q = s.as<SeqStmtNode>()) {
      auto* n = new SeqStmtNode(q->seq);
      n->span = spanFrom(t);
      return Stmt(n);
    }
    return s;
  }

  // --- scopes -----------------------------------------------------------------------------
  struct Scope {
    Parser& p;
    explicit Scope(Parser& parser) : p(parser) { p.m_scopes.emplace_back(); }
    ~Scope() { p.m_scopes.pop_back(); }
  };
  const Entry* lookup(const std::string& name) const {
    for (auto it = m_scopes.rbegin(); it != m_scopes.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }
  void define(const std::string& name, Var v) { m_scopes.back()[name] = Entry{std::move(v), {}}; }
  void define(const std::string& name, Buffer b) { m_scopes.back()[name] = Entry{{}, std::move(b)}; }

  /// The candidate nearest to `word` by edit distance, or "" when none is close.
  static std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t bestDist = std::max<size_t>(1, word.size() / 3) + 1;
    for (auto& c : candidates) {
      std::vector<size_t> row(c.size() + 1);
      for (size_t j = 0; j <= c.size(); ++j) row[j] = j;
      for (size_t i = 1; i <= word.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= c.size(); ++j) {
          size_t up = row[j];
          row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (word[i - 1] == c[j - 1] ? 0 : 1)});
          diag = up;
        }
      }
      if (row[c.size()] < bestDist) {
        bestDist = row[c.size()];
        best = c;
      }
    }
    return best;
  }

  /// "; did you mean 'x'?" naming the closest buffer (or variable) in scope, or "".
  std::string suggest(const std::string& word, bool buffers) const {
    std::vector<std::string> names;
    for (auto& scope : m_scopes)
      for (auto& [n, e] : scope)
        if (buffers ? e.buf.defined() : e.var.defined() || e.buf.defined()) names.push_back(n);
    std::sort(names.begin(), names.end());
    std::string best = closest(word, names);
    return best.empty() ? "" : "; did you mean '" + best + "'?";
  }

  // --- module and function ----------------------------------------------------------------
  void skipImports() {
    while (peek().kind == TokenKind::Newline) next();
    while (peek().isName("from") || peek().isName("import")) {
      while (peek().kind != TokenKind::Newline && peek().kind != TokenKind::End) next();
      if (peek().kind == TokenKind::Newline) next();
    }
  }

  /// Declares every `n = T.int32()` of the function ahead, since buffer shapes in the signature
  /// may use them.
  void predeclare() {
    int depth = 0;
    bool entered = false;
    for (size_t i = m_p; i < m_t.size(); ++i) {
      const Token& t = m_t[i];
      if (t.kind == TokenKind::Indent) {
        ++depth;
        entered = true;
      } else if (t.kind == TokenKind::Dedent) {
        if (--depth <= 0 && entered) break;
      }
      if (i == 0 || i + 6 >= m_t.size() || t.kind != TokenKind::Name) continue;
      TokenKind prev = m_t[i - 1].kind;
      if (prev != TokenKind::Newline && prev != TokenKind::Indent && prev != TokenKind::Dedent) continue;
      if (!(m_t[i + 1].isOp("=") && m_t[i + 2].isName("T") && m_t[i + 3].isOp(".") &&
            m_t[i + 4].kind == TokenKind::Name && m_t[i + 5].isOp("(") && m_t[i + 6].isOp(")")))
        continue;
      auto dt = DataType::parse(m_t[i + 4].text);
      if (!dt || lookupLocal(t.text)) continue;
      define(t.text, newVar(t, t.text, *dt));
    }
  }
  bool lookupLocal(const std::string& name) const { return m_scopes.back().count(name) > 0; }

  /// Declares the scalar parameters (`n: T.int32`) first: buffer shapes before them may use them.
  void predeclareScalarParams() {
    int depth = 1;
    for (size_t i = m_p; i + 4 < m_t.size() && depth > 0; ++i) {
      const Token& t = m_t[i];
      if (t.isOp("(") || t.isOp("[") || t.isOp("{")) ++depth;
      else if (t.isOp(")") || t.isOp("]") || t.isOp("}")) --depth;
      else if (t.kind == TokenKind::End || t.kind == TokenKind::Newline) break;
      if (depth != 1 || t.kind != TokenKind::Name || !m_t[i + 1].isOp(":") || !m_t[i + 2].isName("T") ||
          !m_t[i + 3].isOp(".") || m_t[i + 4].kind != TokenKind::Name || m_t[i + 4].text == "Buffer")
        continue;
      auto dt = DataType::parse(m_t[i + 4].text);
      if (!dt || lookupLocal(t.text)) continue;
      Var v = newVar(t, t.text, *dt);
      m_scalarParams.insert(v.get());
      define(t.text, v);
    }
  }

  PrimFunc parseFuncDef() {
    skipImports();
    const Token& start = peek();
    expectOp("@", "to start a function ('@T.prim_func')");
    expectKeyword("T", "after '@'");
    expectOp(".", "after '@T'");
    const Token& d = expectName("after '@T.'");
    if (d.text != "prim_func") fail(d, "expected '@T.prim_func', found '@T." + d.text + "'");
    if (acceptOp("(")) {
      while (!peek().isOp(")")) {
        if (peek().kind == TokenKind::End || peek().kind == TokenKind::Newline)
          fail(peek(), "expected ')' after decorator arguments");
        next();
      }
      next();
    }
    expectNewline("after '@T.prim_func'");
    expectKeyword("def", "after '@T.prim_func'");
    const Token& nameTok = expectName("after 'def'");
    Scope fnScope(*this);
    m_sawBlock = false;
    predeclare();
    auto* fn = new PrimFuncNode();
    PrimFunc result(fn);
    fn->name = nameTok.text;
    expectOp("(", "after the function name");
    std::set<std::string> seen;
    predeclareScalarParams();
    while (!peek().isOp(")")) {
      const Token& p = expectName("as a parameter name");
      if (!seen.insert(p.text).second) fail(p, "duplicate parameter '" + p.text + "'");
      expectOp(":", "after parameter '" + p.text + "' (every parameter needs a type)");
      expectKeyword("T", "in the type of parameter '" + p.text + "'");
      expectOp(".", "after 'T'");
      const Token& ty = expectName("as a parameter type");
      if (ty.text == "Buffer") {
        expectOp("(", "after 'T.Buffer'");
        BufferSpec spec = parseBufferSpec(false, "T.Buffer");
        Buffer b = makeBufferFrom(spec, p);
        Var v = newVar(p, p.text, DataType::Handle());
        fn->params.push_back(v);
        fn->bufferMap.emplace_back(v, b);
        define(p.text, b);
      } else {
        auto dt = DataType::parse(ty.text);
        if (!dt) fail(ty, "unknown parameter type 'T." + ty.text + "'; expected T.Buffer(...) or a data type");
        const Entry* pre = lookup(p.text);
        Var v = pre && pre->var.defined() && pre->var->dtype == *dt && m_scalarParams.count(pre->var.get())
                    ? pre->var
                    : newVar(p, p.text, *dt);
        fn->params.push_back(v);
        define(p.text, v);
      }
      if (!acceptOp(",")) break;
    }
    expectOp(")", "after the parameter list");
    if (acceptOp("->")) {
      if (peek().isName("None")) next();
      else parseTypeAnnotation();
    }
    expectOp(":", "after the function signature");
    expectNewline("after 'def ...:'");
    if (peek().kind != TokenKind::Indent) fail(peek(), "expected an indented function body");
    const Token& bodyTok = next();
    BlockCtx top;
    top.functionTop = true;
    top.funcAttrs = &fn->attrs;
    top.func = fn;
    std::vector<Stmt> stmts;
    {
      Scope bodyScope(*this);
      stmts = parseStatements(&top);
    }
    if (peek().kind == TokenKind::Dedent) next();
    Stmt body = makeSeq(bodyTok, std::move(stmts));
    auto* rootRealize = body.as<BlockRealizeNode>();
    bool explicitRoot = rootRealize && rootRealize->block.defined() && rootRealize->block->name == "root" &&
                        rootRealize->iterValues.empty();
    if (explicitRoot && !top.allocBuffers.empty())
      fail(bodyTok, "T.alloc_buffer at function level cannot be combined with an explicit root block");
    if (!explicitRoot && (m_sawBlock || !top.allocBuffers.empty())) {
      auto* root = new BlockNode();
      root->name = "root";
      root->body = body;
      root->allocBuffers = top.allocBuffers;
      root->span = spanAt(bodyTok);
      auto* r = new BlockRealizeNode({}, mk<IntImmNode>(bodyTok, DataType::Bool(), 1), Block(root));
      r->span = spanAt(bodyTok);
      body = Stmt(r);
    }
    fn->body = body;
    fn->span = spanFrom(start);
    return result;
  }

  DataType parseTypeAnnotation() {
    expectKeyword("T", "in a type annotation");
    expectOp(".", "after 'T'");
    const Token& ty = expectName("as a type");
    auto dt = DataType::parse(ty.text);
    if (!dt) fail(ty, "unknown data type 'T." + ty.text + "'");
    return *dt;
  }

  // --- buffers ----------------------------------------------------------------------------
  std::vector<Expr> parseExprTuple(const std::string& what) {
    std::vector<Expr> out;
    const char* close = nullptr;
    if (acceptOp("(")) close = ")";
    else if (acceptOp("[")) close = "]";
    if (!close) {
      out.push_back(parseExpr());
      return out;
    }
    while (!peek().isOp(close)) {
      out.push_back(parseExpr());
      if (!acceptOp(",")) break;
    }
    expectOp(close, "to close " + what);
    return out;
  }

  DataType parseDTypeString(const std::string& context) {
    const Token& s = expectString(context);
    auto dt = DataType::parse(s.text);
    if (!dt) fail(s, "unknown data type '" + s.text + "'");
    return *dt;
  }

  /// Arguments after '(' up to and including ')'.
  BufferSpec parseBufferSpec(bool allowData, const std::string& fn) {
    BufferSpec spec;
    bool haveShape = false, haveDtype = false;
    while (!peek().isOp(")")) {
      if (peek().kind == TokenKind::Name && peek(1).isOp("=")) {
        const Token& kw = next();
        next();
        if (kw.text == "shape") {
          spec.shape = parseShape();
          haveShape = true;
        } else if (kw.text == "dtype") {
          spec.dtype = parseDTypeString("for dtype=");
          haveDtype = true;
        } else if (kw.text == "data" && allowData) {
          if (peek().isName("None")) {
            next();
          } else {
            const Token& dt = peek();
            Expr d = parseExpr();
            auto* v = d.as<VarNode>();
            if (!v || !v->dtype.isHandle()) fail(dt, "data= of " + fn + " must be a handle variable");
            spec.data = Var(v);
          }
        } else if (kw.text == "strides") {
          if (peek().isName("None")) next();
          else spec.strides = parseExprTuple("the strides");
        } else if (kw.text == "elem_offset") {
          if (peek().isName("None")) {
            next();
            spec.elemOffsetNone = true;
          } else {
            spec.elemOffset = parseExpr();
          }
        } else if (kw.text == "scope") {
          spec.scope = expectString("for scope=").text;
        } else if (kw.text == "align") {
          const Token& a = peek();
          if (a.kind != TokenKind::Int) fail(a, "align= must be an integer literal");
          next();
          spec.align = parseIntText(a, 1, 1 << 30);
        } else {
          fail(kw, "unknown keyword argument '" + kw.text + "' of " + fn);
        }
      } else if (!haveShape) {
        spec.shape = parseShape();
        haveShape = true;
      } else if (!haveDtype) {
        spec.dtype = parseDTypeString("as the buffer data type");
        haveDtype = true;
      } else {
        fail(peek(), "too many positional arguments to " + fn);
      }
      if (!acceptOp(",")) break;
    }
    expectOp(")", "after the arguments of " + fn);
    if (!haveShape) fail(m_t[m_p - 1], fn + " needs a shape");
    return spec;
  }

  /// A buffer shape; a constant extent must not be negative.
  std::vector<Expr> parseShape() {
    Token at = peek();
    std::vector<Expr> shape = parseExprTuple("the shape");
    for (size_t d = 0; d < shape.size(); ++d)
      if (const int64_t* c = asConstInt(shape[d]); c && *c < 0)
        fail(at, "buffer shape has the negative extent " + std::to_string(*c) + " in dimension " + std::to_string(d));
    return shape;
  }

  Buffer makeBufferFrom(const BufferSpec& spec, const Token& nameTok) {
    auto* n = new BufferNode();
    n->name = nameTok.text;
    n->data = spec.data.defined() ? spec.data : newVar(nameTok, nameTok.text, DataType::Handle());
    n->dtype = spec.dtype;
    n->shape = spec.shape;
    n->strides = spec.strides;
    if (!spec.elemOffsetNone)
      n->elemOffset = spec.elemOffset.defined() ? spec.elemOffset : intImm(DataType::Int(32), 0);
    n->scope = spec.scope;
    n->alignment = spec.align;
    n->span = spanAt(nameTok);
    return Buffer(n);
  }

  int64_t parseIntText(const Token& t, int64_t lo, int64_t hi, bool negative = false) {
    errno = 0;
    char* end = nullptr;
    unsigned long long u = std::strtoull(t.text.c_str(), &end, 10);
    if (errno == ERANGE || u > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()) + 1ull)
      fail(t, "integer literal " + t.text + " is too large");
    if (!negative && u > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()))
      fail(t, "integer literal " + t.text + " is too large");
    int64_t v = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
    if (v < lo || v > hi)
      fail(t, "integer " + std::string(negative ? "-" : "") + t.text + " is out of range [" +
                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }

  // --- statements -------------------------------------------------------------------------
  std::vector<Stmt> parseStatements(BlockCtx* ctx) {
    std::vector<Stmt> out;
    while (peek().kind != TokenKind::Dedent && peek().kind != TokenKind::End) {
      bool rest = false;
      Stmt s = parseStatement(ctx, rest);
      if (s.defined()) out.push_back(s);
      if (rest) break;
    }
    return out;
  }

  /// ':' NEWLINE INDENT statements DEDENT
  Stmt parseSuite(BlockCtx* ctx, const std::string& after) {
    expectOp(":", after);
    if (peek().kind != TokenKind::Newline) fail(peek(), "expected a new line and an indented block " + after);
    next();
    if (peek().kind != TokenKind::Indent) fail(peek(), "expected an indented block " + after);
    const Token& t = next();
    Scope s(*this);
    std::vector<Stmt> stmts = parseStatements(ctx);
    if (peek().kind == TokenKind::Dedent) next();
    return makeSeq(t, std::move(stmts));
  }

  /// The rest of the current suite, as the body of a flat binding statement.
  Stmt parseRest(BlockCtx* ctx, const Token& t, bool& rest) {
    rest = true;
    return makeSeq(t, parseStatements(ctx));
  }

  Stmt parseStatement(BlockCtx* ctx, bool& rest) {
    const Token& t = peek();
    Depth depth(*this, t, true);
    if (t.kind == TokenKind::Indent) fail(t, "unexpected indentation");
    if (t.kind == TokenKind::Newline) {
      next();
      return Stmt();
    }
    if (t.kind == TokenKind::Name) {
      if (t.text == "for") return parseFor();
      if (t.text == "while") {
        next();
        Expr c = parseExpr();
        Stmt body = parseSuite(nullptr, "after the while condition");
        return mkS<WhileNode>(t, c, body);
      }
      if (t.text == "if") return parseIf();
      if (t.text == "else" || t.text == "elif") fail(t, "'" + t.text + "' without a matching 'if'");
      static const std::set<std::string> keywords = {"def", "class", "return", "in", "and", "or", "import",
                                                     "from", "as", "lambda", "break", "continue", "del",
                                                     "global", "raise", "try", "except", "yield", "is"};
      if (keywords.count(t.text)) fail(t, "unexpected keyword '" + t.text + "'");
      if (t.text == "with") return parseWith(ctx);
      if (t.text == "pass") {
        next();
        expectNewline("after 'pass'");
        return Stmt();
      }
      if (t.text == "assert") {
        next();
        Expr c = parseExpr();
        expectOp(",", "after the assert condition (a message string must follow)");
        std::string msg = expectString("as the assert message").text;
        expectNewline("after assert");
        Stmt body = parseRest(ctx, t, rest);
        return mkS<AssertStmtNode>(t, c, msg, body);
      }
      if (t.text != "T" && peek(1).isOp(":")) return parseAnnotatedLet(ctx, rest);
      if (t.text != "T" && (peek(1).isOp("=") || peek(1).isOp(","))) return parseAssign(ctx, rest);
      if (t.text == "T" && peek(1).isOp(".") && peek(2).kind == TokenKind::Name) {
        const std::string& fn = peek(2).text;
        if (fn == "reads" || fn == "writes" || fn == "where" || fn == "block_attr" || fn == "func_attr")
          return parseHeader(ctx);
        if (fn == "evaluate") {
          next();
          next();
          next();
          expectOp("(", "after 'T.evaluate'");
          Expr v = parseExpr();
          expectOp(")", "after argument list");
          expectNewline("after T.evaluate(...)");
          return mkS<EvaluateNode>(t, v);
        }
      }
    }
    // A store `A[i] = v` or an expression statement.
    Expr e = parseExpr();
    if (peek().isOp("=")) {
      const Token& eq = next();
      auto* load = e.as<BufferLoadNode>();
      if (!load) fail(eq, "only a buffer element A[...] can be assigned here");
      const Token& vt = peek();
      Expr v = parseExpr();
      expectNewline("after the store");
      Buffer b = load->buffer;
      DataType want = b->dtype.withLanes(v.dtype().lanes());
      if (v.dtype() != want) {
        if (v.as<IntImmNode>() || v.as<FloatImmNode>())
          v = spanned(vt, guard(vt, [&] { return makeConst(b->dtype, v.as<IntImmNode>() ? double(v.as<IntImmNode>()->value) : v.as<FloatImmNode>()->value); }));
        else
          return spannedStmt(t, guard(vt, [&] { return bufferStore(b, v, load->indices); }));
      }
      return mkS<BufferStoreNode>(t, b, v, load->indices);
    }
    expectNewline("after the expression statement");
    return mkS<EvaluateNode>(t, e);
  }
  Stmt spannedStmt(const Token& t, const Stmt& s) { return withSpan(s, spanFrom(t)); }

  Stmt parseAnnotatedLet(BlockCtx* ctx, bool& rest) {
    const Token& name = next();
    next();  // ':'
    DataType dt = parseTypeAnnotation();
    expectOp("=", "after the type of '" + name.text + "'");
    const Token& vt = peek();
    Expr v = parseExpr();
    if (v.dtype() != dt) {
      if (auto* i = v.as<IntImmNode>()) v = spanned(vt, guard(vt, [&] { return makeConst(dt, double(i->value)); }));
      else if (auto* f = v.as<FloatImmNode>()) v = spanned(vt, guard(vt, [&] { return makeConst(dt, f->value); }));
    }
    expectNewline("after the assignment");
    Var var = newVar(name, name.text, dt);
    define(name.text, var);
    Stmt body = parseRest(ctx, name, rest);
    return mkS<LetStmtNode>(name, var, v, body);
  }

  bool atT(const char* fn) const {
    return peek().isName("T") && peek(1).isOp(".") && peek(2).isName(fn);
  }

  Stmt parseAssign(BlockCtx* ctx, bool& rest) {
    std::vector<const Token*> targets;
    targets.push_back(&next());
    while (acceptOp(",")) targets.push_back(&expectName("as an assignment target"));
    expectOp("=", "after the assignment targets");
    const Token& rhs = peek();
    const Token& name = *targets[0];
    if (atT("axis")) {
      parseAxis(ctx, targets);
      return Stmt();
    }
    if (targets.size() > 1) fail(rhs, "only T.axis.remap(...) can assign several names");
    if (atT("allocate")) {
      next();
      next();
      next();
      auto a = parseAllocateArgs();
      expectNewline("after T.allocate(...)");
      Var v = newVar(name, name.text, DataType::Handle());
      define(name.text, v);
      Stmt body = parseRest(ctx, name, rest);
      return makeAllocate(name, v, a, body);
    }
    if (atT("match_buffer")) {
      next();
      next();
      next();
      if (!ctx || !ctx->func) fail(rhs, "T.match_buffer is only allowed at function level");
      expectOp("(", "after 'T.match_buffer'");
      const Token& pt = expectName("as the handle parameter of T.match_buffer");
      Var param;
      for (auto& p : ctx->func->params)
        if (p->name == pt.text) param = p;
      if (!param.defined() || !param->dtype.isHandle())
        fail(pt, "'" + pt.text + "' is not a T.handle parameter of the function");
      if (ctx->func->bufferOf(param).defined()) fail(pt, "parameter '" + pt.text + "' already has a buffer");
      expectOp(",", "after the handle parameter");
      BufferSpec spec = parseBufferSpec(false, "T.match_buffer");
      expectNewline("after T.match_buffer(...)");
      Buffer b = makeBufferFrom(spec, name);
      ctx->func->bufferMap.emplace_back(param, b);
      define(name.text, b);
      return Stmt();
    }
    if (atT("Buffer")) {
      // TVM's `B = T.Buffer(shape, dtype, data=ptr)` in a body: a view, no statement of its own.
      next();
      next();
      next();
      expectOp("(", "after 'T.Buffer'");
      BufferSpec spec = parseBufferSpec(true, "T.Buffer");
      expectNewline("after the buffer declaration");
      define(name.text, makeBufferFrom(spec, name));
      return Stmt();
    }
    if (atT("decl_buffer") || atT("alloc_buffer")) {
      bool decl = atT("decl_buffer");
      next();
      next();
      next();
      expectOp("(", decl ? "after 'T.decl_buffer'" : "after 'T.alloc_buffer'");
      BufferSpec spec = parseBufferSpec(decl, decl ? "T.decl_buffer" : "T.alloc_buffer");
      expectNewline("after the buffer declaration");
      Buffer b = makeBufferFrom(spec, name);
      define(name.text, b);
      if (!decl) {
        if (!ctx) fail(rhs, "T.alloc_buffer is only allowed directly inside a T.block or at function level");
        ctx->allocBuffers.push_back(b);
        return Stmt();
      }
      Stmt body = parseRest(ctx, name, rest);
      return mkS<DeclBufferNode>(name, b, body);
    }
    if (peek().isName("T") && peek(1).isOp(".") && peek(2).kind == TokenKind::Name && peek(3).isOp("(") &&
        peek(4).isOp(")") && DataType::parse(peek(2).text)) {
      const Entry* e = lookup(name.text);
      if (!e || !e->var.defined() || e->var->dtype != *DataType::parse(peek(2).text))
        fail(name, "a variable declaration 'n = T.int32()' must appear at function level");
      for (int k = 0; k < 5; ++k) next();
      expectNewline("after the variable declaration");
      return Stmt();
    }
    Expr v = parseExpr();
    expectNewline("after the assignment");
    Var var = newVar(name, name.text, v.dtype());
    define(name.text, var);
    Stmt body = parseRest(ctx, name, rest);
    return mkS<LetStmtNode>(name, var, v, body);
  }

  struct AllocArgs {
    std::vector<Expr> extents;
    DataType dtype = DataType::Float(32);
    std::string scope = "global";
    Expr condition;
    Annotations annotations;
  };

  /// After 'T.allocate'; consumes '(' ... ')'.
  AllocArgs parseAllocateArgs() {
    AllocArgs a;
    expectOp("(", "after 'T.allocate'");
    int pos = 0;
    while (!peek().isOp(")")) {
      if (peek().kind == TokenKind::Name && peek(1).isOp("=")) {
        const Token& kw = next();
        next();
        if (kw.text == "extents") a.extents = parseExprTuple("the extents");
        else if (kw.text == "dtype") a.dtype = parseDTypeString("for dtype=");
        else if (kw.text == "scope") a.scope = expectString("for scope=").text;
        else if (kw.text == "condition") a.condition = parseExpr();
        else if (kw.text == "annotations") a.annotations = parseDict();
        else fail(kw, "unknown keyword argument '" + kw.text + "' of T.allocate");
      } else if (pos == 0) {
        a.extents = parseExprTuple("the extents");
        ++pos;
      } else if (pos == 1) {
        a.dtype = parseDTypeString("as the allocation data type");
        ++pos;
      } else if (pos == 2) {
        a.scope = expectString("as the storage scope").text;
        ++pos;
      } else {
        fail(peek(), "too many positional arguments to T.allocate");
      }
      if (!acceptOp(",")) break;
    }
    expectOp(")", "after argument list");
    return a;
  }

  Stmt makeAllocate(const Token& t, const Var& v, const AllocArgs& a, const Stmt& body) {
    Expr cond = a.condition.defined() ? a.condition : mk<IntImmNode>(t, DataType::Bool(), 1);
    return mkS<AllocateNode>(t, v, a.dtype, a.extents, cond, body, a.scope, a.annotations);
  }

  void requireBlock(BlockCtx* ctx, const Token& t, const std::string& what) {
    if (!ctx || ctx->functionTop) fail(t, what + " is only allowed directly inside a T.block");
  }

  void parseAxis(BlockCtx* ctx, const std::vector<const Token*>& targets) {
    const Token& t = peek();
    next();
    next();
    next();  // T . axis
    expectOp(".", "after 'T.axis'");
    const Token& kind = expectName("after 'T.axis.'");
    requireBlock(ctx, t, "T.axis." + kind.text);
    if (kind.text == "remap") {
      expectOp("(", "after 'T.axis.remap'");
      const Token& ks = expectString("as the kinds of T.axis.remap (like \"SSR\")");
      expectOp(",", "after the remap kinds");
      expectOp("[", "before the remapped loop variables");
      std::vector<std::pair<const Token*, Expr>> vals;
      while (!peek().isOp("]")) {
        const Token& vt = peek();
        vals.emplace_back(&vt, parseExpr());
        if (!acceptOp(",")) break;
      }
      expectOp("]", "after the remapped loop variables");
      expectOp(")", "after argument list");
      expectNewline("after T.axis.remap(...)");
      for (char c : ks.text)
        if (c != 'S' && c != 'R') fail(ks, "T.axis.remap kinds '" + ks.text + "' must be S or R");
      if (ks.text.size() != targets.size() || vals.size() != targets.size())
        fail(ks, "T.axis.remap binds " + std::to_string(targets.size()) + " names but has " +
                     std::to_string(ks.text.size()) + " kinds and " + std::to_string(vals.size()) + " values");
      for (size_t i = 0; i < targets.size(); ++i) {
        auto* v = vals[i].second.as<VarNode>();
        auto it = v ? m_loopDom.find(v) : m_loopDom.end();
        if (it == m_loopDom.end()) fail(*vals[i].first, "T.axis.remap values must be loop variables");
        Expr ext = it->second;
        Range dom(mk<IntImmNode>(*vals[i].first, ext.dtype(), 0), ext);
        Var iv = newVar(*targets[i], targets[i]->text, v->dtype);
        addIter(ctx, *targets[i], IterVar(iv, dom, ks.text[i] == 'S' ? IterType::DataPar : IterType::CommReduce),
                vals[i].second, true);
        define(targets[i]->text, iv);
      }
      return;
    }
    IterType type;
    if (kind.text == "spatial" || kind.text == "S") type = IterType::DataPar;
    else if (kind.text == "reduce" || kind.text == "R") type = IterType::CommReduce;
    else if (kind.text == "scan") type = IterType::Ordered;
    else if (kind.text == "opaque") type = IterType::Opaque;
    else fail(kind, "unknown axis kind 'T.axis." + kind.text + "'; expected spatial, reduce, scan, opaque or remap");
    if (targets.size() != 1) fail(kind, "T.axis." + kind.text + " binds exactly one name");
    expectOp("(", "after 'T.axis." + kind.text + "'");
    const Token& domTok = peek();
    Range dom = parseDom();
    Expr value;
    bool hasValue = false;
    if (acceptOp(",")) {
      if (!peek().isOp(")")) {
        value = parseExpr();
        hasValue = true;
        acceptOp(",");
      }
    }
    expectOp(")", "after argument list");
    expectNewline("after the axis");
    if (!dom.extent.dtype().isIntegral()) fail(domTok, "an axis domain must be an integer");
    DataType dt = hasValue ? value.dtype() : dom.extent.dtype();
    Var iv = newVar(*targets[0], targets[0]->text, dt);
    addIter(ctx, *targets[0], IterVar(iv, dom, type), value, hasValue);
    define(targets[0]->text, iv);
  }

  void addIter(BlockCtx* ctx, const Token& t, IterVar iv, Expr value, bool hasValue) {
    if (ctx->realize && !hasValue) fail(t, "the axis '" + t.text + "' needs a binding value");
    if (!ctx->realize && hasValue) fail(t, "a block with no_realize=True takes no axis values");
    ctx->iterVars.push_back(std::move(iv));
    if (hasValue) {
      ctx->values.push_back(std::move(value));
      ctx->valueToks.push_back(static_cast<size_t>(&t - m_t.data()));
    }
  }

  /// `extent` or `(min, end)`.
  Range parseDom() {
    const Token& t = peek();
    if (t.isOp("(")) {
      size_t save = m_p;
      next();
      Expr lo = parseExpr();
      if (acceptOp(",")) {
        const Token& hiTok = peek();
        Expr hi = parseExpr();
        expectOp(")", "after the domain (min, end)");
        return Range(lo, extentOf(hiTok, lo, hi));
      }
      m_p = save;
    }
    Expr ext = parseExpr();
    if (!ext.dtype().isIntegral()) fail(t, "a domain extent must be an integer");
    return Range(mk<IntImmNode>(t, ext.dtype(), 0), ext);
  }

  /// The extent of [lo, hi): folded for constants, `e` when hi is `lo + e`, else hi - lo.
  Expr extentOf(const Token& t, const Expr& lo, const Expr& hi) {
    auto* a = lo.as<IntImmNode>();
    auto* b = hi.as<IntImmNode>();
    if (a && b && a->dtype == b->dtype && !a->dtype.isBool()) return mk<IntImmNode>(t, a->dtype, b->value - a->value);
    if (auto* add = hi.as<BinaryNode>())
      if (add->op == BinOp::Add && structuralEqual(add->a, lo)) return add->b;
    return spanned(t, guard(t, [&] { return hi - lo; }));
  }

  Stmt parseHeader(BlockCtx* ctx) {
    const Token& t = next();
    next();
    const Token& fn = next();
    expectOp("(", "after 'T." + fn.text + "'");
    if (fn.text == "func_attr") {
      if (!ctx || !ctx->funcAttrs) fail(t, "T.func_attr is only allowed at function level");
      Annotations a = parseDict();
      for (auto& [k, v] : a) (*ctx->funcAttrs)[k] = v;
    } else if (fn.text == "block_attr") {
      requireBlock(ctx, t, "T.block_attr");
      Annotations a = parseDict();
      for (auto& [k, v] : a) ctx->annotations[k] = v;
    } else if (fn.text == "where") {
      requireBlock(ctx, t, "T.where");
      if (!ctx->realize) fail(t, "a block with no_realize=True has no T.where");
      ctx->predicateTok = m_p;
      ctx->predicate = parseExpr();
    } else {
      requireBlock(ctx, t, "T." + fn.text);
      auto& out = fn.text == "reads" ? ctx->reads : ctx->writes;
      (fn.text == "reads" ? ctx->readsGiven : ctx->writesGiven) = true;
      out.clear();
      bool list = acceptOp("[");
      while (!peek().isOp(list ? "]" : ")")) {
        out.push_back(parseRegion());
        if (!acceptOp(",")) break;
      }
      if (list) expectOp("]", "after the region list");
    }
    expectOp(")", "after argument list");
    expectNewline("after T." + fn.text + "(...)");
    return Stmt();
  }

  BufferRegion parseRegion() {
    const Token& name = peek();
    if (name.kind != TokenKind::Name) fail(name, "expected a buffer region like A[i, 0:4], found " + describeToken(name));
    next();
    const Entry* e = lookup(name.text);
    if (!e || !e->buf.defined()) fail(name, "unknown buffer '" + name.text + "'" + suggest(name.text, true));
    Buffer b = e->buf;
    const Token& open = expectOp("[", "after the buffer name in a region");
    std::vector<Range> region;
    if (peek().isOp("(") && peek(1).isOp(")")) {
      next();
      next();
    } else {
      while (!peek().isOp("]")) {
        const Token& lt = peek();
        Expr lo = parseExpr();
        if (acceptOp(":")) {
          const Token& ht = peek();
          Expr hi = parseExpr();
          region.emplace_back(lo, isIntLiteral(lo, 0) ? hi : extentOf(ht, lo, hi));
        } else {
          if (!lo.dtype().isIntegral()) fail(lt, "a region index must be an integer");
          region.emplace_back(lo, mk<IntImmNode>(lt, lo.dtype(), 1));
        }
        if (!acceptOp(",")) break;
      }
    }
    expectOp("]", "after the region");
    if (region.size() != b->ndim())
      fail(open, "buffer '" + name.text + "' has " + std::to_string(b->ndim()) + " dimension(s) but the region has " +
                     std::to_string(region.size()));
    return BufferRegion(b, std::move(region));
  }

  Annotations parseDict() {
    Annotations a;
    expectOp("{", "to start a dictionary");
    while (!peek().isOp("}")) {
      const Token& k = expectString("as a dictionary key");
      expectOp(":", "after the dictionary key");
      a[k.text] = parseExpr();
      if (!acceptOp(",")) break;
    }
    expectOp("}", "to close the dictionary");
    return a;
  }

  Stmt parseIf() {
    const Token& t = next();  // 'if' or 'elif'
    Expr c = parseExpr();
    Stmt thenCase = parseSuite(nullptr, "after the if condition");
    Stmt elseCase;
    if (peek().isName("elif")) {
      elseCase = parseIf();
    } else if (peek().isName("else")) {
      next();
      elseCase = parseSuite(nullptr, "after 'else'");
    }
    return mkS<IfThenElseNode>(t, c, thenCase, elseCase);
  }

  Stmt parseFor() {
    const Token& t = next();
    std::vector<const Token*> names;
    do names.push_back(&expectName("as a loop variable"));
    while (acceptOp(","));
    expectKeyword("in", "after the loop variables");
    const Token& it = peek();
    ForKind kind = ForKind::Serial;
    std::string thread;
    Annotations ann;
    std::vector<Expr> pos;
    std::vector<const Token*> posTok;
    bool grid = false;
    if (it.isName("range")) {
      next();
    } else {
      expectKeyword("T", "after 'in' (expected range(...), T.grid(...), T.serial(...), ...)");
      expectOp(".", "after 'T'");
      const Token& k = expectName("after 'T.'");
      if (k.text == "serial") kind = ForKind::Serial;
      else if (k.text == "parallel") kind = ForKind::Parallel;
      else if (k.text == "vectorized") kind = ForKind::Vectorized;
      else if (k.text == "unroll") kind = ForKind::Unrolled;
      else if (k.text == "thread_binding") kind = ForKind::ThreadBinding;
      else if (k.text == "grid") grid = true;
      else fail(k, "unknown loop kind 'T." + k.text + "'; expected serial, parallel, vectorized, unroll, thread_binding or grid");
    }
    expectOp("(", "after the loop iterator");
    while (!peek().isOp(")")) {
      if (peek().kind == TokenKind::Name && peek(1).isOp("=")) {
        const Token& kw = next();
        next();
        if (kw.text == "thread" && kind == ForKind::ThreadBinding) thread = expectString("for thread=").text;
        else if (kw.text == "annotations" && !grid) ann = parseDict();
        else fail(kw, "unknown keyword argument '" + kw.text + "' of the loop");
      } else if (peek().kind == TokenKind::String && kind == ForKind::ThreadBinding) {
        thread = next().text;
      } else {
        posTok.push_back(&peek());
        pos.push_back(parseExpr());
      }
      if (!acceptOp(",")) break;
    }
    expectOp(")", "after argument list");
    for (size_t i = 0; i < pos.size(); ++i)
      if (!pos[i].dtype().isIntegral() || pos[i].dtype().lanes() != 1)
        fail(*posTok[i], "loop bounds must be scalar integers, not " + pos[i].dtype().str());
    std::vector<std::pair<Expr, Expr>> doms;
    if (grid) {
      if (pos.size() != names.size())
        fail(it, "T.grid has " + std::to_string(pos.size()) + " extents for " + std::to_string(names.size()) +
                     " loop variables");
      for (size_t i = 0; i < pos.size(); ++i) doms.emplace_back(mk<IntImmNode>(*posTok[i], pos[i].dtype(), 0), pos[i]);
    } else {
      if (names.size() != 1) fail(*names[1], "only T.grid binds several loop variables");
      if (pos.size() == 1) doms.emplace_back(mk<IntImmNode>(*posTok[0], pos[0].dtype(), 0), pos[0]);
      else if (pos.size() == 2) doms.emplace_back(pos[0], extentOf(*posTok[1], pos[0], pos[1]));
      else fail(it, "a loop takes an extent or (start, stop), got " + std::to_string(pos.size()) + " arguments");
    }
    Scope s(*this);
    std::vector<Var> vars;
    for (size_t i = 0; i < names.size(); ++i) {
      Var v = newVar(*names[i], names[i]->text, grid || pos.size() == 1 ? doms[i].second.dtype() : doms[i].first.dtype());
      define(names[i]->text, v);
      m_loopDom[v.get()] = doms[i].second;
      vars.push_back(v);
    }
    Stmt body = parseSuite(nullptr, "after the for statement");
    for (size_t i = vars.size(); i-- > 0;) {
      m_loopDom.erase(vars[i].get());
      body = mkS<ForNode>(t, vars[i], doms[i].first, doms[i].second, kind, body, thread, ann);
    }
    return body;
  }

  Stmt parseWith(BlockCtx* ctx) {
    const Token& t = next();
    expectKeyword("T", "after 'with' (expected T.block, T.init, T.attr, T.LetStmt, T.Assert, T.allocate or T.decl_buffer)");
    expectOp(".", "after 'T'");
    const Token& fn = expectName("after 'T.'");
    if (fn.text == "block") return parseBlock(t);
    if (fn.text == "init") {
      requireBlock(ctx, fn, "T.init");
      if (ctx->init.defined()) fail(fn, "a block has at most one T.init()");
      expectOp("(", "after 'T.init'");
      expectOp(")", "after 'T.init(' (it takes no arguments)");
      ctx->init = parseSuite(nullptr, "after 'with T.init()'");
      return Stmt();
    }
    if (fn.text == "attr") {
      expectOp("(", "after 'T.attr'");
      Expr node;
      if (peek().isName("None")) next();
      else node = parseExpr();
      expectOp(",", "after the attribute node");
      std::string key = expectString("as the attribute key").text;
      expectOp(",", "after the attribute key");
      Expr value = parseExpr();
      expectOp(")", "after argument list");
      Stmt body = parseSuite(nullptr, "after 'with T.attr(...)'");
      return mkS<AttrStmtNode>(t, node, key, value, body);
    }
    if (fn.text == "Assert") {
      expectOp("(", "after 'T.Assert'");
      Expr c = parseExpr();
      expectOp(",", "after the assert condition");
      std::string msg = expectString("as the assert message").text;
      expectOp(")", "after argument list");
      Stmt body = parseSuite(nullptr, "after 'with T.Assert(...)'");
      return mkS<AssertStmtNode>(t, c, msg, body);
    }
    if (fn.text == "LetStmt") {
      expectOp("(", "after 'T.LetStmt'");
      Expr v = parseExpr();
      expectOp(")", "after argument list");
      expectKeyword("as", "after 'T.LetStmt(...)'");
      const Token& name = expectName("after 'as'");
      Scope s(*this);
      Var var = newVar(name, name.text, v.dtype());
      define(name.text, var);
      Stmt body = parseSuite(nullptr, "after 'with T.LetStmt(...) as " + name.text + "'");
      return mkS<LetStmtNode>(t, var, v, body);
    }
    if (fn.text == "allocate") {
      AllocArgs a = parseAllocateArgs();
      expectKeyword("as", "after 'T.allocate(...)'");
      const Token& name = expectName("after 'as'");
      Scope s(*this);
      Var v = newVar(name, name.text, DataType::Handle());
      define(name.text, v);
      Stmt body = parseSuite(nullptr, "after 'with T.allocate(...) as " + name.text + "'");
      return makeAllocate(t, v, a, body);
    }
    if (fn.text == "decl_buffer") {
      expectOp("(", "after 'T.decl_buffer'");
      BufferSpec spec = parseBufferSpec(true, "T.decl_buffer");
      expectKeyword("as", "after 'T.decl_buffer(...)'");
      const Token& name = expectName("after 'as'");
      Scope s(*this);
      Buffer b = makeBufferFrom(spec, name);
      define(name.text, b);
      Stmt body = parseSuite(nullptr, "after 'with T.decl_buffer(...) as " + name.text + "'");
      return mkS<DeclBufferNode>(t, b, body);
    }
    fail(fn, "unknown with-statement 'T." + fn.text +
                 "'; expected T.block, T.init, T.attr, T.LetStmt, T.Assert, T.allocate or T.decl_buffer");
  }

  Stmt parseBlock(const Token& t) {
    expectOp("(", "after 'T.block'");
    std::string name = expectString("as the block name").text;
    BlockCtx ctx;
    if (acceptOp(",")) {
      if (!peek().isOp(")")) {
        const Token& kw = expectName("as a keyword argument of T.block");
        if (kw.text != "no_realize") fail(kw, "unknown keyword argument '" + kw.text + "' of T.block");
        expectOp("=", "after 'no_realize'");
        if (peek().isName("True")) ctx.realize = false;
        else if (!peek().isName("False")) fail(peek(), "no_realize= must be True or False");
        next();
      }
    }
    expectOp(")", "after argument list");
    Scope s(*this);
    Stmt body = parseSuite(&ctx, "after 'with T.block(...)'");
    m_sawBlock = true;
    // Bindings and the predicate are evaluated outside the block: they cannot use its iter vars.
    for (auto& iv : ctx.iterVars) {
      if (ctx.predicate.defined() && usesVar(ctx.predicate, iv.var))
        fail(m_t[ctx.predicateTok], "T.where uses the block's own axis '" + iv.var->name +
                                        "'; write it in terms of the loop variables");
      for (size_t k = 0; k < ctx.values.size(); ++k)
        if (usesVar(ctx.values[k], iv.var))
          fail(m_t[ctx.valueToks[k]], "an axis value uses the block's own axis '" + iv.var->name + "'");
    }
    // Like TVMScript, a block with iter vars that leaves out T.reads / T.writes gets them from
    // its body (the schedule's dataflow checks rely on them).
    if (!ctx.iterVars.empty() && (!ctx.readsGiven || !ctx.writesGiven)) {
      auto [reads, writes] = inferAccessRegions(body, ctx.init, ctx.allocBuffers);
      if (!ctx.readsGiven) ctx.reads = std::move(reads);
      if (!ctx.writesGiven) ctx.writes = std::move(writes);
    }
    auto* b = new BlockNode();
    Block block(b);
    b->name = name;
    b->iterVars = ctx.iterVars;
    b->reads = ctx.reads;
    b->writes = ctx.writes;
    b->body = body;
    b->init = ctx.init;
    b->allocBuffers = ctx.allocBuffers;
    b->annotations = ctx.annotations;
    b->span = spanFrom(t);
    if (!ctx.realize) return Stmt(block);
    Expr pred = ctx.predicate.defined() ? ctx.predicate : mk<IntImmNode>(t, DataType::Bool(), 1);
    return mkS<BlockRealizeNode>(t, ctx.values, pred, block);
  }

  // --- expressions ------------------------------------------------------------------------
  Expr parseExpr() { return parseOr(); }

  Expr parseOr() {
    const Token& t = peek();
    Expr a = parseAnd();
    while (peek().isName("or")) {
      const Token& op = next();
      Expr b = parseAnd();
      a = spanned(t, guard(op, [&] { return a || b; }));
    }
    return a;
  }
  Expr parseAnd() {
    const Token& t = peek();
    Expr a = parseNot();
    while (peek().isName("and")) {
      const Token& op = next();
      Expr b = parseNot();
      a = spanned(t, guard(op, [&] { return a && b; }));
    }
    return a;
  }
  Expr parseNot() {
    const Token& t = peek();
    Depth d(*this, t);
    if (t.isName("not")) {
      next();
      Expr a = parseNot();
      if (a.dtype().isBool()) return mk<NotNode>(t, a);
      return spanned(t, guard(t, [&] { return !a; }));
    }
    return parseCmp();
  }
  static bool cmpOp(const Token& t, BinOp& op) {
    if (t.kind != TokenKind::Op) return false;
    if (t.text == "<") op = BinOp::LT;
    else if (t.text == "<=") op = BinOp::LE;
    else if (t.text == ">") op = BinOp::GT;
    else if (t.text == ">=") op = BinOp::GE;
    else if (t.text == "==") op = BinOp::EQ;
    else if (t.text == "!=") op = BinOp::NE;
    else return false;
    return true;
  }
  Expr parseCmp() {
    const Token& t = peek();
    Expr a = parseAdd();
    BinOp op;
    if (cmpOp(peek(), op)) {
      const Token& o = next();
      Expr b = parseAdd();
      a = spanned(t, guard(o, [&] { return binary(op, a, b); }));
      if (cmpOp(peek(), op)) fail(peek(), "chained comparisons are not supported; use parentheses");
    }
    return a;
  }
  Expr parseAdd() {
    const Token& t = peek();
    Expr a = parseMul();
    while (peek().isOp("+") || peek().isOp("-")) {
      const Token& o = next();
      Expr b = parseMul();
      BinOp op = o.text == "+" ? BinOp::Add : BinOp::Sub;
      a = spanned(t, guard(o, [&] { return binary(op, a, b); }));
    }
    return a;
  }
  Expr parseMul() {
    const Token& t = peek();
    Expr a = parseUnary();
    while (peek().isOp("*") || peek().isOp("/") || peek().isOp("//") || peek().isOp("%")) {
      const Token& o = next();
      Expr b = parseUnary();
      BinOp op = o.text == "*" ? BinOp::Mul : o.text == "/" ? BinOp::Div : o.text == "//" ? BinOp::FloorDiv : BinOp::FloorMod;
      a = spanned(t, guard(o, [&] { return binary(op, a, b); }));
    }
    return a;
  }
  Expr parseUnary() {
    const Token& t = peek();
    Depth d(*this, t);
    if (t.isOp("-")) {
      next();
      if (peek().kind == TokenKind::Int) {
        const Token& n = next();
        int64_t v = parseIntText(n, std::numeric_limits<int32_t>::min(), 0, true);
        return mk<IntImmNode>(t, DataType::Int(32), v);
      }
      if (peek().kind == TokenKind::Float) {
        const Token& n = next();
        return mk<FloatImmNode>(t, DataType::Float(32), -std::strtod(n.text.c_str(), nullptr));
      }
      Expr a = parseUnary();
      return spanned(t, guard(t, [&] { return -a; }));
    }
    if (t.isOp("+")) {
      next();
      return parseUnary();
    }
    return parseAtom();
  }

  Expr parseAtom() {
    const Token& t = peek();
    switch (t.kind) {
    case TokenKind::Int: {
      next();
      int64_t v = parseIntText(t, 0, std::numeric_limits<int64_t>::max());
      if (v > std::numeric_limits<int32_t>::max())
        fail(t, "integer literal " + t.text + " does not fit in int32; write T.int64(" + t.text + ")");
      return mk<IntImmNode>(t, DataType::Int(32), v);
    }
    case TokenKind::Float: next(); return mk<FloatImmNode>(t, DataType::Float(32), std::strtod(t.text.c_str(), nullptr));
    case TokenKind::String: next(); return mk<StringImmNode>(t, t.text);
    case TokenKind::Op:
      if (t.isOp("(")) {
        next();
        Expr e = parseExpr();
        expectOp(")", "to close the parenthesis");
        return e;
      }
      fail(t, "expected an expression, found " + describeToken(t));
    case TokenKind::Name: break;
    default: fail(t, "expected an expression, found " + describeToken(t));
    }
    next();
    if (t.text == "True" || t.text == "False") return mk<IntImmNode>(t, DataType::Bool(), t.text == "True" ? 1 : 0);
    if (t.text == "T" && peek().isOp(".")) {
      next();
      return parseTCall(t);
    }
    const Entry* e = lookup(t.text);
    if (e && e->var.defined()) {
      if (peek().isOp("[")) fail(peek(), "'" + t.text + "' is a variable, not a buffer");
      return e->var;
    }
    if (e && e->buf.defined()) {
      if (peek().isOp(".")) {
        next();
        const Token& f = expectName("after '.'");
        if (f.text != "data") fail(f, "unknown buffer field '" + f.text + "'; only .data is supported");
        return e->buf->data;
      }
      if (!peek().isOp("[")) fail(t, "buffer '" + t.text + "' must be indexed, as " + t.text + "[...]");
      return parseLoad(t, e->buf);
    }
    if (peek().isOp("[")) fail(t, "unknown buffer '" + t.text + "'" + suggest(t.text, true));
    fail(t, "unknown name '" + t.text + "'" + suggest(t.text, false));
  }

  Expr parseLoad(const Token& t, const Buffer& b) {
    const Token& open = next();
    std::vector<Expr> idx;
    if (peek().isOp("(") && peek(1).isOp(")")) {
      next();
      next();
    } else {
      while (!peek().isOp("]")) {
        const Token& it = peek();
        Expr i = parseExpr();
        if (!i.dtype().isIntegral()) fail(it, "a buffer index must be an integer, not " + i.dtype().str());
        idx.push_back(i);
        if (!acceptOp(",")) break;
      }
    }
    expectOp("]", "after the buffer indices");
    if (idx.size() != b->ndim())
      fail(open, "buffer '" + t.text + "' has " + std::to_string(b->ndim()) + " dimension(s) but is indexed with " +
                     std::to_string(idx.size()));
    int lanes = 1;
    for (auto& i : idx) lanes = std::max(lanes, i.dtype().lanes());
    return mk<BufferLoadNode>(t, b->dtype.withLanes(lanes * b->dtype.lanes()), b, idx);
  }

  /// '(' args ')' with a count check.
  std::vector<Expr> parseArgs(const Token& fn, size_t lo, size_t hi) {
    expectOp("(", "after 'T." + fn.text + "'");
    std::vector<Expr> args;
    while (!peek().isOp(")")) {
      args.push_back(parseExpr());
      if (!acceptOp(",")) break;
    }
    expectOp(")", "after argument list");
    if (args.size() < lo || args.size() > hi) {
      std::string want = lo == hi ? std::to_string(lo) : std::to_string(lo) + " or more";
      fail(fn, "T." + fn.text + " takes " + want + " argument(s), got " + std::to_string(args.size()));
    }
    return args;
  }

  int parseLanes(const std::string& fn) {
    const Token& l = peek();
    if (l.kind != TokenKind::Int) fail(l, "the lanes of " + fn + " must be an integer literal");
    next();
    return static_cast<int>(parseIntText(l, 1, 65535));
  }

  Expr parseTCall(const Token& t) {
    const Token& fn = expectName("after 'T.'");
    const std::string& f = fn.text;
    if (auto dt = DataType::parse(f)) return parseTypedConst(t, fn, *dt);
    if (f == "Cast") {
      expectOp("(", "after 'T.Cast'");
      DataType dt = parseDTypeString("as the cast target type");
      expectOp(",", "after the cast type");
      Expr v = parseExpr();
      expectOp(")", "after argument list");
      if (dt.isVoid() || v.dtype().lanes() != dt.lanes())
        fail(fn, "cannot cast " + v.dtype().str() + " to " + dt.str());
      return mk<CastNode>(t, dt, v);
    }
    if (f == "Select") {
      auto a = parseArgs(fn, 3, 3);
      if (a[0].dtype().isBool() && a[1].dtype() == a[2].dtype()) return mk<SelectNode>(t, a[0], a[1], a[2]);
      return spanned(t, guard(fn, [&] { return select(a[0], a[1], a[2]); }));
    }
    if (f == "Let") {
      expectOp("(", "after 'T.Let'");
      if (!(peek().kind == TokenKind::Name && peek(1).isOp(","))) {
        // TVM's spelling: T.Let(body, where={x: value}) with x declared as `x = T.int32()`.
        Expr body = parseExpr();
        expectOp(",", "after the T.Let body");
        expectKeyword("where", "in T.Let(body, where={var: value})");
        expectOp("=", "after 'where'");
        expectOp("{", "after 'where='");
        const Token& vt = expectName("as the T.Let variable");
        const Entry* e = lookup(vt.text);
        if (!e || !e->var.defined()) fail(vt, "unknown name '" + vt.text + "'");
        expectOp(":", "after the T.Let variable");
        const Token& valueTok = peek();
        Expr v = parseExpr();
        if (v.dtype() != e->var->dtype)
          fail(valueTok, "the T.Let value is " + v.dtype().str() + " but '" + vt.text + "' is " + e->var->dtype.str());
        expectOp("}", "after the T.Let binding");
        expectOp(")", "after argument list");
        // Each Let binds its own variable (TIR is SSA): rename the declared one in the body.
        Var own = newVar(vt, vt.text, e->var->dtype);
        Var declared = e->var;
        body = substitute(body, [&](const Var& u) { return u.same_as(declared) ? Expr(own) : Expr(); });
        return mk<LetNode>(t, own, v, body);
      }
      const Token& name = expectName("as the T.Let variable");
      expectOp(",", "after the T.Let variable");
      Expr v = parseExpr();
      expectOp(",", "after the T.Let value");
      Scope s(*this);
      Var var = newVar(name, name.text, v.dtype());
      define(name.text, var);
      Expr body = parseExpr();
      expectOp(")", "after argument list");
      return mk<LetNode>(t, var, v, body);
    }
    if (f == "Ramp") {
      expectOp("(", "after 'T.Ramp'");
      const Token& bt = peek();
      Expr base = parseExpr();
      expectOp(",", "after the ramp base");
      Expr stride = parseExpr();
      expectOp(",", "after the ramp stride");
      int lanes = parseLanes("T.Ramp");
      expectOp(")", "after argument list");
      if (base.dtype().lanes() != 1 || stride.dtype().lanes() != 1) fail(bt, "T.Ramp base and stride must be scalars");
      if (base.dtype() == stride.dtype()) return mk<RampNode>(t, base, stride, lanes);
      return spanned(t, guard(bt, [&] { return ramp(base, stride, lanes); }));
    }
    if (f == "Broadcast") {
      expectOp("(", "after 'T.Broadcast'");
      const Token& vt = peek();
      Expr v = parseExpr();
      expectOp(",", "after the broadcast value");
      int lanes = parseLanes("T.Broadcast");
      expectOp(")", "after argument list");
      if (v.dtype().lanes() != 1) fail(vt, "T.Broadcast of a vector");
      return mk<BroadcastNode>(t, v, lanes);
    }
    static const std::unordered_map<std::string, BinOp> binops = {
        {"truncdiv", BinOp::Div}, {"truncmod", BinOp::Mod}, {"floordiv", BinOp::FloorDiv},
        {"floormod", BinOp::FloorMod}, {"min", BinOp::Min}, {"max", BinOp::Max},
        {"And", BinOp::And}, {"Or", BinOp::Or}};
    if (auto it = binops.find(f); it != binops.end()) {
      auto a = parseArgs(fn, 2, 2);
      return spanned(t, guard(fn, [&] { return binary(it->second, a[0], a[1]); }));
    }
    if (f == "Not") {
      auto a = parseArgs(fn, 1, 1);
      if (a[0].dtype().isBool()) return mk<NotNode>(t, a[0]);
      return spanned(t, guard(fn, [&] { return !a[0]; }));
    }
    if (f == "call_intrin") {
      expectOp("(", "after 'T.call_intrin'");
      DataType dt = parseDTypeString("as the call result type");
      expectOp(",", "after the call type");
      std::string op = expectString("as the intrinsic name").text;
      std::vector<Expr> args;
      while (acceptOp(",")) {
        if (peek().isOp(")")) break;
        args.push_back(parseExpr());
      }
      expectOp(")", "after argument list");
      return mk<CallNode>(t, dt, op, args);
    }
    if (f == "if_then_else") {
      auto a = parseArgs(fn, 3, 3);
      if (a[1].dtype() == a[2].dtype()) return mk<CallNode>(t, a[1].dtype(), "if_then_else", a);
      return spanned(t, guard(fn, [&] { return ifThenElse(a[0], a[1], a[2]); }));
    }
    if (const Intrinsic* in = findIntrinsic(f)) {
      size_t n = in->numArgs < 0 ? 1 : static_cast<size_t>(in->numArgs);
      auto a = parseArgs(fn, n, in->numArgs < 0 ? 1000 : n);
      if (a.empty()) fail(fn, "T." + f + " needs an argument to take its type from; use T.call_intrin");
      return mk<CallNode>(t, a[0].dtype(), f, a);
    }
    std::vector<std::string> known = intrinsicNames();
    for (const char* k : {"Cast", "Select", "Let", "Ramp", "Broadcast", "truncdiv", "truncmod", "floordiv",
                          "floormod", "min", "max", "And", "Or", "Not", "call_intrin", "if_then_else", "int32",
                          "int64", "float32", "float64", "bool"})
      known.push_back(k);
    std::string best = closest(f, known);
    fail(fn, "unknown function 'T." + f + "'" + (best.empty() ? "" : "; did you mean 'T." + best + "'?"));
  }

  Expr parseTypedConst(const Token& t, const Token& fn, DataType dt) {
    expectOp("(", "after 'T." + fn.text + "'");
    if (peek().isOp(")"))
      fail(fn, "T." + fn.text + "() declares a variable and must stand alone, as 'n = T." + fn.text + "()'");
    if (dt.lanes() != 1 || dt.isHandle() || dt.isVoid()) fail(fn, "T." + fn.text + "(...) is not a scalar constant type");
    // A literal argument makes an immediate; anything else is a cast.
    bool neg = peek().isOp("-") && (peek(1).kind == TokenKind::Int || peek(1).kind == TokenKind::Float);
    const Token& lit = peek(neg ? 1 : 0);
    bool closes = peek(neg ? 2 : 1).isOp(")");
    if (closes && (lit.kind == TokenKind::Int || lit.kind == TokenKind::Float)) {
      if (neg) next();
      next();
      next();
      if (dt.isFloat()) {
        double v = std::strtod(lit.text.c_str(), nullptr);
        return mk<FloatImmNode>(t, dt, neg ? -v : v);
      }
      if (lit.kind == TokenKind::Float) fail(lit, "T." + fn.text + " needs an integer literal");
      int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      if (dt.isBool()) lo = 0, hi = 1;
      else if (dt.isInt() && dt.bits() < 64) lo = -(int64_t(1) << (dt.bits() - 1)), hi = (int64_t(1) << (dt.bits() - 1)) - 1;
      else if (dt.isUInt() && dt.bits() < 64) lo = 0, hi = (int64_t(1) << dt.bits()) - 1;
      return mk<IntImmNode>(t, dt, parseIntText(lit, lo, hi, neg));
    }
    if (closes && (lit.isName("True") || lit.isName("False")) && !neg) {
      next();
      next();
      if (dt.isFloat()) fail(lit, "T." + fn.text + " needs a number");
      return mk<IntImmNode>(t, dt, lit.text == "True" ? 1 : 0);
    }
    if (closes && lit.kind == TokenKind::String && !neg && dt.isFloat()) {
      next();
      next();
      double v;
      if (lit.text == "inf") v = std::numeric_limits<double>::infinity();
      else if (lit.text == "-inf") v = -std::numeric_limits<double>::infinity();
      else if (lit.text == "nan") v = std::numeric_limits<double>::quiet_NaN();
      else fail(lit, "expected \"inf\", \"-inf\" or \"nan\", found \"" + lit.text + "\"");
      return mk<FloatImmNode>(t, dt, v);
    }
    Expr v = parseExpr();
    expectOp(")", "after argument list");
    if (v.dtype().lanes() != 1) fail(fn, "cannot convert a vector with T." + fn.text + "(...)");
    return mk<CastNode>(t, dt, v);
  }

  std::shared_ptr<const std::string> m_file;
  std::vector<Token> m_t;
  size_t m_p = 0;
  std::vector<std::unordered_map<std::string, Entry>> m_scopes;
  std::unordered_map<const VarNode*, Expr> m_loopDom;
  int m_depth = 0, m_stmtDepth = 0;
  bool m_sawBlock = false;
  std::set<const VarNode*> m_scalarParams;
};

/// Runs `f`, reporting any failure of a builder as a ParseError at the parser's position.
template <class F> auto protect(std::unique_ptr<Parser>& p, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const ParseError&) {
    throw;
  } catch (const Error& e) {
    throw ParseError(e.what(), p ? p->currentSpan() : Span());
  } catch (const std::exception& e) {
    throw ParseError(std::string("invalid input: ") + e.what(), p ? p->currentSpan() : Span());
  }
}

/// Where "no function found" is reported: the end of the input, or 1:1 of an empty file.
Span startOrEnd(Span s) {
  if (!s.defined()) {
    s.line = 1;
    s.column = 1;
  }
  return s;
}

}  // namespace

IRModule parseModule(const std::string& text, const std::string& fileName) {
  std::unique_ptr<Parser> p;
  return protect(p, [&] {
    p = std::make_unique<Parser>(text, fileName);
    IRModule m;
    for (auto& f : p->parseTop()) {
      if (m.functions.count(f->name))
        LOOM_THROW_AT(ParseError, f->span) << "duplicate function '" << f->name << "'";
      m.add(f);
    }
    if (m.functions.empty())
      LOOM_THROW_AT(ParseError, startOrEnd(p->currentSpan())) << "expected at least one @T.prim_func";
    return m;
  });
}

PrimFunc parseFunc(const std::string& text, const std::string& fileName) {
  std::unique_ptr<Parser> p;
  return protect(p, [&] {
    p = std::make_unique<Parser>(text, fileName);
    auto fns = p->parseTop();
    if (fns.size() != 1) {
      Span sp = fns.size() > 1 ? fns[1]->span : startOrEnd(p->currentSpan());
      LOOM_THROW_AT(ParseError, sp) << "expected one @T.prim_func, found " << fns.size();
    }
    return fns[0];
  });
}

Expr parseExpr(const std::string& text, const std::vector<Var>& vars, const std::vector<Buffer>& buffers,
               const std::string& fileName) {
  std::unique_ptr<Parser> p;
  return protect(p, [&] {
    p = std::make_unique<Parser>(text, fileName);
    return p->parseStandaloneExpr(vars, buffers);
  });
}

}  // namespace loom::tir
