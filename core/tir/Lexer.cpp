// The TVMScript tokenizer: Python's lexical rules for the subset the parser reads.
#include "core/tir/Lexer.h"

#include <cctype>

#include "core/support/Error.h"

namespace loom::tir {

std::string describeToken(const Token& t) {
  switch (t.kind) {
  case TokenKind::Name: return "name '" + t.text + "'";
  case TokenKind::Int:
  case TokenKind::Float: return "number " + t.text;
  case TokenKind::String: return "string literal";
  case TokenKind::Op: return "'" + t.text + "'";
  case TokenKind::Newline: return "end of line";
  case TokenKind::Indent: return "indented block";
  case TokenKind::Dedent: return "end of indented block";
  case TokenKind::End: return "end of input";
  }
  return "token";
}

namespace {

class Lexer {
public:
  Lexer(const std::string& s, std::shared_ptr<const std::string> f) : m_s(s), m_file(std::move(f)) {}

  std::vector<Token> run() {
    m_indents.push_back(0);
    bool atLineStart = true;
    while (m_i < m_s.size()) {
      if (atLineStart && m_depth == 0) {
        atLineStart = false;
        if (!lineStart()) continue;
      }
      char c = m_s[m_i];
      if (c == '\n') {
        if (m_depth == 0 && !m_out.empty() && m_out.back().kind != TokenKind::Newline &&
            m_out.back().kind != TokenKind::Indent && m_out.back().kind != TokenKind::Dedent)
          push(TokenKind::Newline, "", m_line, m_col);
        advance();
        atLineStart = m_depth == 0;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        advance();
        continue;
      }
      if (c == '#') {
        while (m_i < m_s.size() && m_s[m_i] != '\n') advance();
        continue;
      }
      if (c == '\\' && m_i + 1 < m_s.size() && m_s[m_i + 1] == '\n') {
        advance();
        advance();
        continue;
      }
      int line = m_line, col = m_col;
      if (std::isalpha((unsigned char)c) || c == '_') {
        std::string t;
        while (m_i < m_s.size() && (std::isalnum((unsigned char)m_s[m_i]) || m_s[m_i] == '_')) t += advance();
        push(TokenKind::Name, t, line, col);
      } else if (std::isdigit((unsigned char)c) ||
                 (c == '.' && m_i + 1 < m_s.size() && std::isdigit((unsigned char)m_s[m_i + 1]))) {
        number(line, col);
      } else if (c == '"' || c == '\'') {
        string(line, col);
      } else {
        op(line, col);
      }
    }
    if (m_depth > 0) fail(m_openLine, m_openCol, "'" + m_openText + "' is never closed");
    if (!m_out.empty() && m_out.back().kind != TokenKind::Newline && m_out.back().kind != TokenKind::Dedent)
      push(TokenKind::Newline, "", m_line, m_col);
    while (m_indents.size() > 1) {
      m_indents.pop_back();
      push(TokenKind::Dedent, "", m_line, m_col);
    }
    push(TokenKind::End, "", m_line, m_col);
    return std::move(m_out);
  }

private:
  [[noreturn]] void fail(int line, int col, const std::string& msg) {
    Span sp;
    sp.file = m_file;
    sp.line = line;
    sp.column = col;
    LOOM_THROW_AT(ParseError, sp) << msg;
  }

  char advance() {
    char c = m_s[m_i++];
    if (c == '\n') {
      ++m_line;
      m_col = 1;
    } else {
      ++m_col;
    }
    return c;
  }

  void push(TokenKind k, std::string text, int line, int col) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.line = line;
    t.column = col;
    t.endLine = m_line;
    t.endColumn = m_col;
    m_out.push_back(std::move(t));
  }

  /// Measures the indentation of a line; false when the line is blank or a comment.
  bool lineStart() {
    int width = 0;
    size_t j = m_i;
    while (j < m_s.size() && (m_s[j] == ' ' || m_s[j] == '\t' || m_s[j] == '\r' || m_s[j] == '\f')) {
      if (m_s[j] == '\t') width = (width / 8 + 1) * 8;
      else if (m_s[j] == ' ') ++width;
      ++j;
    }
    if (j >= m_s.size() || m_s[j] == '\n' || m_s[j] == '#') return true;  // nothing to measure
    while (m_i < j) advance();
    if (width > m_indents.back()) {
      m_indents.push_back(width);
      push(TokenKind::Indent, "", m_line, m_col);
    } else {
      while (width < m_indents.back()) {
        m_indents.pop_back();
        push(TokenKind::Dedent, "", m_line, m_col);
      }
      if (width != m_indents.back()) fail(m_line, m_col, "unindent does not match any outer indentation level");
    }
    return true;
  }

  void number(int line, int col) {
    std::string t;
    bool isFloat = false;
    while (m_i < m_s.size() && std::isdigit((unsigned char)m_s[m_i])) t += advance();
    if (m_i < m_s.size() && m_s[m_i] == '.') {
      isFloat = true;
      t += advance();
      while (m_i < m_s.size() && std::isdigit((unsigned char)m_s[m_i])) t += advance();
    }
    if (m_i < m_s.size() && (m_s[m_i] == 'e' || m_s[m_i] == 'E')) {
      size_t j = m_i + 1;
      if (j < m_s.size() && (m_s[j] == '+' || m_s[j] == '-')) ++j;
      if (j < m_s.size() && std::isdigit((unsigned char)m_s[j])) {
        isFloat = true;
        t += advance();
        if (m_s[m_i] == '+' || m_s[m_i] == '-') t += advance();
        while (m_i < m_s.size() && std::isdigit((unsigned char)m_s[m_i])) t += advance();
      }
    }
    if (m_i < m_s.size() && (std::isalpha((unsigned char)m_s[m_i]) || m_s[m_i] == '_'))
      fail(m_line, m_col, "invalid number literal '" + t + m_s[m_i] + "'");
    push(isFloat ? TokenKind::Float : TokenKind::Int, t, line, col);
  }

  void string(int line, int col) {
    char q = advance();
    std::string v;
    while (true) {
      if (m_i >= m_s.size() || m_s[m_i] == '\n') fail(line, col, "unterminated string literal");
      char c = advance();
      if (c == q) break;
      if (c != '\\') {
        v += c;
        continue;
      }
      if (m_i >= m_s.size()) fail(line, col, "unterminated string literal");
      char e = advance();
      switch (e) {
      case 'n': v += '\n'; break;
      case 't': v += '\t'; break;
      case 'r': v += '\r'; break;
      case '0': v += '\0'; break;
      case '\\': v += '\\'; break;
      case '\'': v += '\''; break;
      case '"': v += '"'; break;
      case '\n': break;
      case 'x': {
        int val = 0;
        for (int k = 0; k < 2; ++k) {
          if (m_i >= m_s.size() || !std::isxdigit((unsigned char)m_s[m_i]))
            fail(m_line, m_col, "expected two hex digits after '\\x'");
          char h = advance();
          val = val * 16 + (std::isdigit((unsigned char)h) ? h - '0' : std::tolower(h) - 'a' + 10);
        }
        v += static_cast<char>(val);
        break;
      }
      default: v += '\\'; v += e;
      }
    }
    push(TokenKind::String, v, line, col);
  }

  void op(int line, int col) {
    static const char* twoChar[] = {"//", "==", "!=", "<=", ">=", "->", "**"};
    for (const char* t : twoChar) {
      if (m_s.compare(m_i, 2, t) == 0) {
        advance();
        advance();
        push(TokenKind::Op, t, line, col);
        return;
      }
    }
    char c = m_s[m_i];
    static const std::string single = "()[]{},:.=+-*/%<>@;";
    if (single.find(c) == std::string::npos) {
      std::string shown = std::isprint((unsigned char)c) ? std::string(1, c) : "\\x" + hex((unsigned char)c);
      fail(line, col, "unexpected character '" + shown + "'");
    }
    advance();
    if (c == '(' || c == '[' || c == '{') {
      if (m_depth == 0) {
        m_openLine = line;
        m_openCol = col;
        m_openText = std::string(1, c);
      }
      if (++m_depth > 200) fail(line, col, "brackets nested too deeply");
    } else if (c == ')' || c == ']' || c == '}') {
      if (m_depth == 0) fail(line, col, std::string("unmatched '") + c + "'");
      --m_depth;
    }
    push(TokenKind::Op, std::string(1, c), line, col);
  }

  static std::string hex(unsigned v) {
    const char* d = "0123456789abcdef";
    return {d[v >> 4], d[v & 15]};
  }

  const std::string& m_s;
  std::shared_ptr<const std::string> m_file;
  size_t m_i = 0;
  int m_line = 1, m_col = 1;
  int m_depth = 0;
  int m_openLine = 0, m_openCol = 0;
  std::string m_openText;
  std::vector<int> m_indents;
  std::vector<Token> m_out;
};

}  // namespace

std::vector<Token> tokenize(const std::string& text, const std::shared_ptr<const std::string>& file) {
  return Lexer(text, file).run();
}

}  // namespace loom::tir
