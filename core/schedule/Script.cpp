// The schedule-script lexer, parser and interpreter (Python subset of tvm.tir.Schedule scripts).
#include "core/schedule/Script.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>

#include "core/schedule/Schedule.h"
#include "core/schedule/ScheduleError.h"
#include "core/support/Error.h"
#include "core/tir/Op.h"

namespace loom::tir {

// --- Lexer --------------------------------------------------------------------------------

namespace {

enum class Tok { Name, Int, Float, String, Op, Newline, End, Error };

struct Token {
  Tok kind;
  std::string text;
  Span span;
  int64_t intValue = 0;
  double floatValue = 0;
};

class Lexer {
public:
  Lexer(const std::string& text, std::shared_ptr<const std::string> file)
      : m_text(text), m_file(std::move(file)) {}

  /// The tokens; a lexical error becomes an Error token (then End) so that the statements
  /// before it can still run.
  std::vector<Token> run() {
    std::vector<Token> out;
    try {
      lex(out);
    } catch (const ParseError& e) {
      out.push_back(Token{Tok::Error, e.what(), e.span()});
      out.push_back(make(Tok::End, ""));
    }
    return out;
  }

private:
  void lex(std::vector<Token>& out) {
    int depth = 0;
    std::vector<std::pair<std::string, Span>> open; // unclosed brackets, for "never closed"
    while (m_pos < m_text.size()) {
      char c = m_text[m_pos];
      if (c == '#') {
        while (m_pos < m_text.size() && m_text[m_pos] != '\n')
          advance();
        continue;
      }
      if (c == '\\' && m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '\n') {
        advance();
        advance();
        continue;
      }
      if (c == '\n') {
        if (depth == 0 && !out.empty() && out.back().kind != Tok::Newline)
          out.push_back(make(Tok::Newline, "\n"));
        advance();
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        advance();
        continue;
      }
      Span start = here();
      if (std::isalpha((unsigned char)c) || c == '_') {
        std::string s;
        while (m_pos < m_text.size() &&
               (std::isalnum((unsigned char)m_text[m_pos]) || m_text[m_pos] == '_'))
          s += advance();
        out.push_back(finish(Tok::Name, s, start));
      } else if (std::isdigit((unsigned char)c) ||
                 (c == '.' && m_pos + 1 < m_text.size() &&
                  std::isdigit((unsigned char)m_text[m_pos + 1]))) {
        out.push_back(number(start));
      } else if (c == '"' || c == '\'') {
        out.push_back(string(start));
      } else {
        static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "(", ")",
                                    "[",  "]",  "{",  "}",  ",",  "=",  ":", ".",
                                    "+",  "-",  "*",  "/",  "%",  "<",  ">"};
        std::string op;
        for (const char* o : ops)
          if (m_text.compare(m_pos, std::strlen(o), o) == 0) {
            op = o;
            break;
          }
        if (op.empty()) throw ParseError(std::string("unexpected character '") + c + "'", start);
        for (size_t i = 0; i < op.size(); ++i)
          advance();
        if (op == "(" || op == "[" || op == "{") {
          ++depth;
          open.emplace_back(op, start);
        }
        if ((op == ")" || op == "]" || op == "}") && depth > 0) {
          const std::string& want = open.back().first == "(" ? ")" : open.back().first == "[" ? "]" : "}";
          if (op != want)
            throw ParseError("closing '" + op + "' does not match the opening '" + open.back().first + "' at " +
                                 std::to_string(open.back().second.line) + ":" +
                                 std::to_string(open.back().second.column),
                             start);
          --depth;
          open.pop_back();
        }
        out.push_back(finish(Tok::Op, op, start));
      }
    }
    if (!open.empty()) {
      // The statement runs to the end of the input: point at the bracket, as Python does.
      out.erase(std::find_if(out.rbegin(), out.rend(), [](const Token& t) { return t.kind == Tok::Newline; }).base(),
                out.end());
      throw ParseError("'" + open.back().first + "' was never closed", open.back().second);
    }
    if (!out.empty() && out.back().kind != Tok::Newline) out.push_back(make(Tok::Newline, "\n"));
    out.push_back(make(Tok::End, ""));
  }

  char advance() {
    char c = m_text[m_pos++];
    if (c == '\n') {
      ++m_line;
      m_col = 1;
    } else {
      ++m_col;
    }
    return c;
  }
  Span here() const {
    Span s;
    s.file = m_file;
    s.line = s.endLine = m_line;
    s.column = s.endColumn = m_col;
    return s;
  }
  Token make(Tok k, std::string text) { return Token{k, std::move(text), here()}; }
  Token finish(Tok k, std::string text, Span start) {
    start.endLine = m_line;
    start.endColumn = m_col;
    return Token{k, std::move(text), start};
  }
  Token number(Span start) {
    std::string s;
    bool isFloat = false;
    while (m_pos < m_text.size()) {
      char c = m_text[m_pos];
      if (std::isdigit((unsigned char)c) || c == '_') {
        advance();
        if (c != '_') s += c;
      } else if (c == '.' || c == 'e' || c == 'E') {
        isFloat = true;
        s += advance();
        if ((c == 'e' || c == 'E') && m_pos < m_text.size() &&
            (m_text[m_pos] == '-' || m_text[m_pos] == '+'))
          s += advance();
      } else {
        break;
      }
    }
    Token t = finish(isFloat ? Tok::Float : Tok::Int, s, start);
    try {
      if (isFloat)
        t.floatValue = std::stod(s);
      else
        t.intValue = std::stoll(s);
    } catch (const std::exception&) {
      throw ParseError("malformed number '" + s + "'", start);
    }
    return t;
  }
  Token string(Span start) {
    char q = advance();
    std::string s;
    while (true) {
      if (m_pos >= m_text.size() || m_text[m_pos] == '\n')
        throw ParseError("unterminated string", start);
      char c = advance();
      if (c == q) break;
      if (c == '\\' && m_pos < m_text.size()) {
        char e = advance();
        s += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        continue;
      }
      s += c;
    }
    return finish(Tok::String, s, start);
  }

  const std::string& m_text;
  std::shared_ptr<const std::string> m_file;
  size_t m_pos = 0;
  int m_line = 1, m_col = 1;
};

// --- Parser -------------------------------------------------------------------------------

class Parser {
public:
  explicit Parser(std::vector<Token> toks) : m_toks(std::move(toks)) {}

  std::vector<ScriptStmt> script() {
    std::vector<ScriptStmt> out;
    while (!atEnd())
      out.push_back(statement());
    return out;
  }

  /// Skips blank lines; true when no statement is left.
  bool atEnd() {
    while (peek().kind == Tok::Newline)
      ++m_pos;
    return peek().kind == Tok::End;
  }

  ScriptStmt statement() {
    ScriptStmt st;
    st.span = peek().span;
    if (peek().kind == Tok::Name && isPythonKeywordStatement(peek().text))
      fail(peek(), "'" + peek().text +
                       "' statements are not part of the schedule script (only assignments and "
                       "calls such as `b = sch.get_block(\"C\")`; `sch` is already defined)");
    // Try an assignment target list first: names, optionally in () or [], separated by commas.
    size_t save = m_pos;
    if (tryTargets(st)) {
      st.value = expr();
    } else {
      m_pos = save;
      st.targets.clear();
      st.targetSpans.clear();
      st.unpack = false;
      st.value = expr();
      if (isOp("="))
        fail(peek(), "cannot assign to this expression (only names and tuples of names)");
    }
    if (peek().kind != Tok::Newline && peek().kind != Tok::End)
      fail(peek(), "unexpected " + describe(peek()) + " at the end of the statement");
    if (peek().kind == Tok::Newline) ++m_pos;
    return st;
  }

  ScriptExprPtr single() {
    auto e = expr();
    while (peek().kind == Tok::Newline)
      ++m_pos;
    if (peek().kind != Tok::End)
      fail(peek(), "unexpected '" + peek().text + "' after the expression");
    return e;
  }

private:
  static bool isPythonKeywordStatement(const std::string& name) {
    for (const char* k : {"import", "from", "for", "while", "if", "elif", "else", "def", "class",
                          "with", "return", "try", "except", "del", "pass", "global", "assert"})
      if (name == k) return true;
    return false;
  }
  const Token& peek(size_t k = 0) const {
    const Token& t = m_toks[std::min(m_pos + k, m_toks.size() - 1)];
    if (t.kind == Tok::Error) throw ParseError(t.text, t.span);
    return t;
  }
  bool isOp(const char* op) const { return peek().kind == Tok::Op && peek().text == op; }
  const Token& next() {
    peek();
    return m_toks[std::min(m_pos++, m_toks.size() - 1)];
  }
  [[noreturn]] void fail(const Token& t, const std::string& msg) { throw ParseError(msg, t.span); }
  std::string describe(const Token& t) const {
    if (t.kind == Tok::Newline) return "end of line";
    if (t.kind == Tok::End) return "end of input";
    return "'" + t.text + "'";
  }
  const Token& expect(const char* op) {
    if (!isOp(op)) fail(peek(), std::string("expected '") + op + "', found " + describe(peek()));
    return next();
  }

  bool tryTargets(ScriptStmt& st) {
    const char* close = nullptr;
    if (isOp("("))
      close = ")";
    else if (isOp("["))
      close = "]";
    if (close) {
      ++m_pos;
      st.unpack = true;
    }
    while (true) {
      if (peek().kind != Tok::Name || peek().text == "lambda") return false;
      st.targets.push_back(peek().text);
      st.targetSpans.push_back(peek().span);
      ++m_pos;
      if (isOp(",")) {
        ++m_pos;
        st.unpack = true;
        if (close && isOp(close)) break;
        if (!close && isOp("=")) break;
        continue;
      }
      break;
    }
    if (close) {
      if (!isOp(close)) return false;
      ++m_pos;
    }
    if (!isOp("=")) return false;
    ++m_pos;
    return true;
  }

  ScriptExprPtr node(ScriptExpr::Kind k, const Span& s) {
    auto e = std::make_shared<ScriptExpr>();
    e->kind = k;
    e->span = s;
    return e;
  }

  ScriptExprPtr expr() {
    // Bound the recursion: bad input must not overflow the stack.
    struct Depth {
      int& d;
      explicit Depth(int& x) : d(++x) {}
      ~Depth() { --d; }
    } depth(m_depth);
    if (m_depth > 200) fail(peek(), "expression nested too deeply");
    return exprInner();
  }

  ScriptExprPtr exprInner() {
    if (peek().kind == Tok::Name && peek().text == "lambda") {
      auto e = node(ScriptExpr::Kind::Lambda, next().span);
      while (!isOp(":")) {
        if (peek().kind != Tok::Name)
          fail(peek(), "expected a parameter name in the lambda, found " + describe(peek()));
        e->params.push_back(next().text);
        if (isOp(","))
          ++m_pos;
        else if (!isOp(":"))
          fail(peek(), "expected ',' or ':' in the lambda, found " + describe(peek()));
      }
      ++m_pos;
      e->items.push_back(lambdaBody());
      return e;
    }
    return arith();
  }

  // A lambda body may be a bare tuple: `lambda i, j: j, i` is not Python, but `(j, i)` is.
  ScriptExprPtr lambdaBody() { return expr(); }

  ScriptExprPtr arith() {
    auto lhs = term();
    for (int n = 0; isOp("+") || isOp("-"); ++n) {
      if (n > 1000) fail(peek(), "expression too long");
      auto op = next();
      auto e = node(ScriptExpr::Kind::BinOp, op.span);
      e->text = op.text;
      e->items = {lhs, term()};
      lhs = e;
    }
    return lhs;
  }
  ScriptExprPtr term() {
    auto lhs = unary();
    for (int n = 0; isOp("*") || isOp("//") || isOp("%") || isOp("/"); ++n) {
      if (n > 1000) fail(peek(), "expression too long");
      auto op = next();
      auto e = node(ScriptExpr::Kind::BinOp, op.span);
      e->text = op.text;
      e->items = {lhs, unary()};
      lhs = e;
    }
    return lhs;
  }
  ScriptExprPtr unary() {
    struct Depth {
      int& d;
      explicit Depth(int& x) : d(++x) {}
      ~Depth() { --d; }
    } depth(m_depth);
    if (m_depth > 200) fail(peek(), "expression nested too deeply");
    if (isOp("-")) {
      auto e = node(ScriptExpr::Kind::Neg, next().span);
      e->items = {unary()};
      return e;
    }
    if (isOp("+")) {
      ++m_pos;
      return unary();
    }
    return postfix();
  }
  ScriptExprPtr postfix() {
    auto e = atom();
    for (int n = 0;; ++n) {
      if (n > 1000) fail(peek(), "expression too long");
      if (isOp(".")) {
        ++m_pos;
        if (peek().kind != Tok::Name)
          fail(peek(), "expected a name after '.', found " + describe(peek()));
        auto a = node(ScriptExpr::Kind::Attribute, peek().span);
        a->text = next().text;
        a->items = {e};
        e = a;
      } else if (isOp("(")) {
        auto c = node(ScriptExpr::Kind::Call, e->span);
        ++m_pos;
        c->items = {e};
        while (!isOp(")")) {
          if (peek().kind == Tok::Name && peek(1).kind == Tok::Op && peek(1).text == "=") {
            std::string name = next().text;
            ++m_pos;
            c->kwargs.push_back({name, expr()});
          } else {
            if (!c->kwargs.empty()) fail(peek(), "positional argument after keyword argument");
            if (isOp("*")) {
              auto star = node(ScriptExpr::Kind::Star, next().span);
              star->items = {expr()};
              c->items.push_back(star);
            } else {
              c->items.push_back(expr());
            }
          }
          if (isOp(","))
            ++m_pos;
          else if (!isOp(")"))
            fail(peek(), "expected ',' or ')' in the argument list, found " + describe(peek()));
        }
        ++m_pos;
        e = c;
      } else if (isOp("[")) {
        auto s = node(ScriptExpr::Kind::Subscript, peek().span);
        ++m_pos;
        s->items = {e, expr()};
        expect("]");
        e = s;
      } else {
        return e;
      }
    }
  }
  ScriptExprPtr atom() {
    const Token& t = peek();
    switch (t.kind) {
    case Tok::Int: {
      auto e = node(ScriptExpr::Kind::Int, t.span);
      e->intValue = next().intValue;
      return e;
    }
    case Tok::Float: {
      auto e = node(ScriptExpr::Kind::Float, t.span);
      e->floatValue = next().floatValue;
      return e;
    }
    case Tok::String: {
      auto e = node(ScriptExpr::Kind::String, t.span);
      e->text = next().text;
      // Adjacent string literals concatenate, as in Python.
      while (peek().kind == Tok::String)
        e->text += next().text;
      return e;
    }
    case Tok::Name: {
      if (t.text == "None") return node(ScriptExpr::Kind::None, next().span);
      if (t.text == "True" || t.text == "False") {
        auto e = node(ScriptExpr::Kind::Bool, t.span);
        e->intValue = next().text == "True";
        return e;
      }
      auto e = node(ScriptExpr::Kind::Name, t.span);
      e->text = next().text;
      return e;
    }
    case Tok::Op:
      if (t.text == "(" || t.text == "[") {
        bool paren = t.text == "(";
        auto e = node(paren ? ScriptExpr::Kind::Tuple : ScriptExpr::Kind::List, next().span);
        const char* close = paren ? ")" : "]";
        bool sawComma = false;
        while (!isOp(close)) {
          e->items.push_back(expr());
          if (isOp(",")) {
            ++m_pos;
            sawComma = true;
          } else if (!isOp(close)) {
            fail(peek(), std::string("expected ',' or '") + close + "', found " + describe(peek()));
          }
        }
        ++m_pos;
        if (paren && e->items.size() == 1 && !sawComma) return e->items[0];
        return e;
      }
      break;
    default:
      break;
    }
    fail(t, "expected an expression, found " + describe(t));
  }

  std::vector<Token> m_toks;
  size_t m_pos = 0;
  int m_depth = 0;
};

int precedence(const ScriptExpr& e) {
  if (e.kind == ScriptExpr::Kind::BinOp) return e.text == "+" || e.text == "-" ? 1 : 2;
  if (e.kind == ScriptExpr::Kind::Neg) return 3;
  if (e.kind == ScriptExpr::Kind::Lambda) return 0;
  return 4;
}

} // namespace

std::string ScriptExpr::str() const {
  auto join = [&](size_t from) {
    std::string s;
    for (size_t i = from; i < items.size(); ++i)
      s += (i > from ? ", " : "") + items[i]->str();
    return s;
  };
  switch (kind) {
  case Kind::Name:
    return text;
  case Kind::Int:
    return std::to_string(intValue);
  case Kind::Float: {
    std::ostringstream os;
    os.precision(17);
    os << floatValue;
    std::string s = os.str();
    return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
  }
  case Kind::String:
    return "\"" + text + "\"";
  case Kind::None:
    return "None";
  case Kind::Bool:
    return intValue ? "True" : "False";
  case Kind::List:
    return "[" + join(0) + "]";
  case Kind::Tuple:
    return "(" + join(0) + (items.size() == 1 ? ",)" : ")");
  case Kind::Call: {
    std::string s = items[0]->str() + "(" + join(1);
    for (auto& [k, v] : kwargs)
      s += (s.back() == '(' ? "" : ", ") + k + "=" + v->str();
    return s + ")";
  }
  case Kind::Attribute:
    return items[0]->str() + "." + text;
  case Kind::Subscript:
    return items[0]->str() + "[" + items[1]->str() + "]";
  case Kind::Lambda: {
    std::string s = "lambda ";
    for (size_t i = 0; i < params.size(); ++i)
      s += (i ? ", " : "") + params[i];
    return s + ": " + items[0]->str();
  }
  case Kind::BinOp: {
    int p = precedence(*this);
    std::string a = items[0]->str(), b = items[1]->str();
    if (precedence(*items[0]) < p) a = "(" + a + ")";
    if (precedence(*items[1]) <= p) b = "(" + b + ")";
    return a + " " + text + " " + b;
  }
  case Kind::Star:
    return "*" + items[0]->str();
  case Kind::Neg: {
    std::string a = items[0]->str();
    return "-" + (precedence(*items[0]) < 3 ? "(" + a + ")" : a);
  }
  }
  return "?";
}

std::string ScriptLambda::str() const {
  std::string s = "lambda ";
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? ", " : "") + params[i];
  return s + ": " + body->str();
}

std::vector<Expr> ScriptLambda::apply(const std::vector<Expr>& args) const {
  if (args.size() != params.size())
    LOOM_THROW(TypeError) << "the index map " << str() << " takes " << params.size()
                          << " indices, got " << args.size();
  std::function<Expr(const ScriptExpr&)> conv = [&](const ScriptExpr& e) -> Expr {
    switch (e.kind) {
    case ScriptExpr::Kind::Name:
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i] == e.text) return args[i];
      throw TypeError("name '" + e.text + "' is not a parameter of " + str(), e.span);
    case ScriptExpr::Kind::Int:
      return intImm(args.empty() ? DataType::Int(32) : args[0].dtype(), e.intValue);
    case ScriptExpr::Kind::Neg:
      return -conv(*e.items[0]);
    case ScriptExpr::Kind::BinOp: {
      Expr a = conv(*e.items[0]), b = conv(*e.items[1]);
      if (e.text == "+") return a + b;
      if (e.text == "-") return a - b;
      if (e.text == "*") return a * b;
      if (e.text == "//") return floordiv(a, b);
      if (e.text == "%") return floormod(a, b);
      throw TypeError("operator '" + e.text + "' is not allowed in an index map (use //)", e.span);
    }
    default:
      throw TypeError("'" + e.str() + "' is not allowed in an index map", e.span);
    }
  };
  std::vector<Expr> out;
  if (body->kind == ScriptExpr::Kind::Tuple || body->kind == ScriptExpr::Kind::List) {
    for (auto& it : body->items)
      out.push_back(conv(*it));
  } else {
    out.push_back(conv(*body));
  }
  return out;
}

std::vector<ScriptStmt> parseScript(const std::string& text, const std::string& fileName) {
  auto file = std::make_shared<const std::string>(fileName);
  Parser p(Lexer(text, file).run());
  return p.script();
}

ScriptExprPtr parseScriptExpr(const std::string& text) {
  Parser p(Lexer(text, nullptr).run());
  return p.single();
}

// --- Interpreter --------------------------------------------------------------------------

namespace {

struct ScriptFailure {
  Span span;
  std::string kind, message, detail;
};

class Interpreter {
public:
  explicit Interpreter(Schedule& sch) : m_sch(sch) {}

  void run(const ScriptStmt& st) {
    Value v = eval(*st.value);
    if (st.targets.empty()) return;
    if (!st.unpack) {
      bind(st.targets[0], v, st.targetSpans[0]);
      return;
    }
    if (v.kind() != Value::Kind::List)
      throw ScriptFailure{st.targetSpans[0], "TypeError",
                          "cannot unpack a " + std::string(v.typeName()) + " into " +
                              std::to_string(st.targets.size()) + " names",
                          ""};
    const auto& items = v.asList();
    if (items.size() != st.targets.size())
      throw ScriptFailure{st.targetSpans[0], "ValueError",
                          "cannot unpack " + std::to_string(items.size()) + " value" +
                              (items.size() == 1 ? "" : "s") + " into " +
                              std::to_string(st.targets.size()) + " name" +
                              (st.targets.size() == 1 ? "" : "s"),
                          ""};
    for (size_t i = 0; i < items.size(); ++i)
      bind(st.targets[i], items[i], st.targetSpans[i]);
  }

private:
  void bind(const std::string& name, const Value& v, const Span& span) {
    if (name == "sch")
      throw ScriptFailure{span, "TypeError", "cannot assign to 'sch' (it is the schedule)", ""};
    m_env[name] = v;
  }

  [[noreturn]] void fail(const Span& s, const std::string& kind, const std::string& msg) {
    throw ScriptFailure{s, kind, msg, ""};
  }

  Value eval(const ScriptExpr& e) {
    switch (e.kind) {
    case ScriptExpr::Kind::Int:
      return Value(e.intValue);
    case ScriptExpr::Kind::Float:
      return Value(e.floatValue);
    case ScriptExpr::Kind::String:
      return Value(e.text);
    case ScriptExpr::Kind::None:
      return Value();
    case ScriptExpr::Kind::Bool:
      return Value(e.intValue != 0);
    case ScriptExpr::Kind::Name: {
      if (e.text == "sch")
        fail(e.span, "TypeError", "'sch' can only be used as sch.<primitive>(...)");
      auto it = m_env.find(e.text);
      if (it == m_env.end()) fail(e.span, "NameError", "name '" + e.text + "' is not defined");
      return it->second;
    }
    case ScriptExpr::Kind::List:
    case ScriptExpr::Kind::Tuple: {
      std::vector<Value> items;
      for (auto& i : e.items)
        items.push_back(eval(*i));
      return Value(std::move(items));
    }
    case ScriptExpr::Kind::Subscript: {
      Value base = eval(*e.items[0]);
      Value idx = eval(*e.items[1]);
      if (base.kind() != Value::Kind::List)
        fail(e.span, "TypeError", std::string("a ") + base.typeName() + " cannot be indexed");
      if (idx.kind() != Value::Kind::Int)
        fail(e.items[1]->span, "TypeError", "list indices must be int");
      int64_t n = int64_t(base.asList().size()), i = idx.asInt();
      if (i < 0) i += n;
      if (i < 0 || i >= n)
        fail(e.items[1]->span, "IndexError",
             "index " + std::to_string(idx.asInt()) + " out of range for a list of " +
                 std::to_string(n));
      return base.asList()[size_t(i)];
    }
    case ScriptExpr::Kind::Lambda: {
      auto f = std::make_shared<ScriptLambda>();
      f->params = e.params;
      f->body = e.items[0];
      return Value(std::shared_ptr<const ScriptLambda>(f));
    }
    case ScriptExpr::Kind::Neg: {
      Value v = eval(*e.items[0]);
      if (v.kind() == Value::Kind::Int) return Value(-v.asInt());
      if (v.kind() == Value::Kind::Float) return Value(-v.asFloat());
      fail(e.span, "TypeError", std::string("bad operand type for unary -: ") + v.typeName());
    }
    case ScriptExpr::Kind::BinOp:
      return binop(e);
    case ScriptExpr::Kind::Attribute:
      fail(e.span, "TypeError", "'" + e.str() + "' must be called");
    case ScriptExpr::Kind::Call:
      return call(e);
    case ScriptExpr::Kind::Star:
      fail(e.span, "TypeError", "'*' can only spread a list into call arguments");
    }
    fail(e.span, "TypeError", "unsupported expression");
  }

  Value binop(const ScriptExpr& e) {
    Value a = eval(*e.items[0]), b = eval(*e.items[1]);
    bool ints = a.kind() == Value::Kind::Int && b.kind() == Value::Kind::Int;
    bool nums = (a.kind() == Value::Kind::Int || a.kind() == Value::Kind::Float) &&
                (b.kind() == Value::Kind::Int || b.kind() == Value::Kind::Float);
    if (!nums)
      fail(e.span, "TypeError",
           "unsupported operand types for " + e.text + ": " + a.typeName() + " and " +
               b.typeName());
    const std::string& op = e.text;
    if (ints) {
      int64_t x = a.asInt(), y = b.asInt();
      if ((op == "//" || op == "%") && y == 0)
        fail(e.span, "ZeroDivisionError", "integer division by zero");
      if (op == "+") return Value(x + y);
      if (op == "-") return Value(x - y);
      if (op == "*") return Value(x * y);
      if (op == "//") return Value(x / y - ((x % y != 0) && ((x < 0) != (y < 0))));
      if (op == "%") return Value(((x % y) + y) % y);
    }
    double x = a.asFloat(), y = b.asFloat();
    if ((op == "/" || op == "//" || op == "%") && y == 0)
      fail(e.span, "ZeroDivisionError", "division by zero");
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "/") return Value(x / y);
    if (op == "//") return Value(std::floor(x / y));
    return Value(x - y * std::floor(x / y));
  }

  Value call(const ScriptExpr& e) {
    const ScriptExpr& fn = *e.items[0];
    if (fn.kind != ScriptExpr::Kind::Attribute || fn.items[0]->kind != ScriptExpr::Kind::Name ||
        fn.items[0]->text != "sch")
      fail(fn.span, "TypeError",
           "only schedule primitives can be called (sch.<primitive>(...)), not '" + fn.str() + "'");
    const InstructionKind* kind = findInstructionKind(fn.text);
    if (!kind) {
      std::string msg = "unknown schedule primitive '" + fn.text + "'";
      auto close = closeInstructionKindNames(fn.text);
      if (!close.empty()) {
        msg += "; did you mean ";
        for (size_t i = 0; i < close.size(); ++i)
          msg += (i ? (i + 1 == close.size() ? " or " : ", ") : "") + ("'" + close[i] + "'");
        msg += "?";
      }
      fail(fn.span, "AttributeError", msg);
    }
    std::vector<Value> args;
    std::vector<Span> spans;
    for (size_t i = 1; i < e.items.size(); ++i) {
      if (e.items[i]->kind == ScriptExpr::Kind::Star) {
        Value v = eval(*e.items[i]->items[0]);
        if (v.kind() != Value::Kind::List)
          fail(e.items[i]->span, "TypeError",
               std::string("only a list can be spread with *, not a ") + v.typeName());
        for (auto& item : v.asList()) {
          args.push_back(item);
          spans.push_back(e.items[i]->span);
        }
        continue;
      }
      args.push_back(eval(*e.items[i]));
      spans.push_back(e.items[i]->span);
    }
    std::vector<std::pair<std::string, Value>> kwargs;
    for (auto& [k, v] : e.kwargs) {
      kwargs.push_back({k, eval(*v)});
      spans.push_back(v->span);
    }
    // Like TVM, a block parameter also takes the block's name: `sch.get_loops("C")` is
    // `sch.get_loops(sch.get_block("C"))` (and records that get_block).
    for (size_t i = 0; i < args.size() && i < kind->params.size(); ++i) {
      if (kind->params[i].variadic) break;
      blockByName(*kind, kind->params[i], args[i], spans[i]);
    }
    for (size_t k = 0; k < kwargs.size(); ++k)
      for (auto& p : kind->params)
        if (p.name == kwargs[k].first)
          blockByName(*kind, p, kwargs[k].second, spans[args.size() + k]);
    Value decision;
    std::vector<Value> inputs;
    int argIndex = -1;
    try {
      inputs = bindArguments(*kind, args, kwargs, decision, &argIndex);
    } catch (const TypeError& err) {
      Span at =
          argIndex >= 0 && size_t(argIndex) < spans.size() ? spans[size_t(argIndex)] : fn.span;
      fail(at, "TypeError", err.what());
    }
    // RV arguments must still name live nodes (say which, where it went, and point at it).
    for (size_t i = 0; i < args.size(); ++i)
      checkRVs(args[i], spans[i]);
    for (size_t k = 0; k < kwargs.size(); ++k)
      checkRVs(kwargs[k].second, spans[args.size() + k]);
    std::vector<Value> outs;
    try {
      outs = kind->apply(m_sch, inputs, decision);
    } catch (const ScheduleError& err) {
      throw ScriptFailure{fn.span, err.kind(), err.fastMessage(), err.detailedMessage()};
    } catch (const InternalError&) {
      throw;
    } catch (const Error& err) {
      throw ScriptFailure{fn.span, err.kind(), err.what(), err.detailedMessage()};
    }
    if (kind->returnsList) return Value(outs);
    return outs.empty() ? Value() : outs[0];
  }

  /// Replaces a string given for a block parameter by the block's RV.
  void blockByName(const InstructionKind& kind, const ParamSpec& p, Value& v, const Span& span) {
    if (v.kind() != Value::Kind::String || !(p.types & vt::Block) || (p.types & vt::String)) return;
    const InstructionKind* getBlock = findInstructionKind("get_block");
    try {
      v = getBlock->apply(m_sch, {v, Value("main")}, Value()).at(0);
    } catch (const ScheduleError& err) {
      throw ScriptFailure{span, err.kind(), err.fastMessage(), err.detailedMessage()};
    }
    (void)kind;
  }

  void checkRVs(const Value& v, const Span& span) {
    if (v.isRV() && !m_sch.isValid(v)) {
      try {
        if (v.kind() == Value::Kind::Block)
          m_sch.get(v.asBlock());
        else if (v.kind() == Value::Kind::Loop)
          m_sch.get(v.asLoop());
        else
          m_sch.get(v.asExprRV());
      } catch (const ScheduleError& err) {
        throw ScriptFailure{span, err.kind(), err.fastMessage(), err.fastMessage()};
      }
    }
    if (v.kind() == Value::Kind::List)
      for (auto& i : v.asList())
        checkRVs(i, span);
  }

  Schedule& m_sch;
  std::map<std::string, Value> m_env;
};

std::string formatAt(const Span& s, const std::string& msg) {
  std::string loc = s.str();
  return (loc.empty() ? std::string() : loc + ": ") + "error: " + msg;
}

} // namespace

ScriptResult runScript(Schedule& sch, const std::string& text, const std::string& fileName) {
  ScriptResult r;
  auto file = std::make_shared<const std::string>(fileName);
  Parser parser(Lexer(text, file).run());
  Interpreter interp(sch);
  Span saved = sch.sourceSpan();
  auto failWith = [&](const Span& span, const std::string& kind, const std::string& msg,
                      const std::string& detail) {
    r.ok = false;
    r.span = span;
    r.errorKind = kind;
    r.error = msg;
    r.message = formatAt(span, msg);
    // Errors without their own IR listing (syntax, names, arguments) show the function as it was
    // before the failing line too, like the primitives' errors.
    r.detail = detail.empty() || detail == msg
                   ? msg + "\n" + printMarked(r.funcBefore, {})
                   : detail;
    sch.setSourceSpan(saved);
    return r;
  };
  // Statements are parsed and run one at a time, so a syntax error stops at its line with the
  // lines above it applied, like a run-time error.
  while (true) {
    r.funcBefore = sch.func();
    ScriptStmt st;
    try {
      if (parser.atEnd()) break;
      st = parser.statement();
    } catch (const ParseError& err) {
      return failWith(err.span(), err.kind(), err.what(), "");
    }
    sch.setSourceSpan(st.span);
    try {
      interp.run(st);
    } catch (const ScriptFailure& f) {
      return failWith(f.span, f.kind, f.message, f.detail);
    } catch (const Error& err) {
      return failWith(st.span, err.kind(), err.what(), err.detailedMessage());
    } catch (const std::exception& err) {
      return failWith(st.span, "InternalError", std::string("internal error: ") + err.what(), "");
    }
    ++r.linesApplied;
  }
  r.funcBefore = PrimFunc();
  sch.setSourceSpan(saved);
  return r;
}

} // namespace loom::tir
