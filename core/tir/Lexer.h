// Splits TVMScript text into Python-style tokens, with INDENT/DEDENT for block structure.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace loom::tir {

enum class TokenKind { Name, Int, Float, String, Op, Newline, Indent, Dedent, End };

/// One token. `text` is the spelling (the decoded value for strings); lines and columns are 1-based.
struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  int line = 0, column = 0;
  int endLine = 0, endColumn = 0;

  bool is(TokenKind k, const char* t) const { return kind == k && text == t; }
  bool isOp(const char* t) const { return is(TokenKind::Op, t); }
  bool isName(const char* t) const { return is(TokenKind::Name, t); }
};

/// Tokenizes `text`; throws ParseError (with the position in `file`) on bad characters,
/// unterminated strings, inconsistent indentation and unbalanced brackets.
std::vector<Token> tokenize(const std::string& text, const std::shared_ptr<const std::string>& file);

/// "name 'x'", "'('", "end of line", ... for error messages.
std::string describeToken(const Token& t);

}  // namespace loom::tir
