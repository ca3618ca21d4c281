// Lexers of the Studio's editors and their light / dark colour sets.
#include "views/Lexers.h"

#include <QColor>
#include <QFile>
#include <QFont>
#include <QRegularExpression>
#include <Qsci/qsciscintilla.h>

#include "views/OperatorJobs.h"

namespace loom::views {

namespace {

QFont codeFont() {
  QFont f("DejaVu Sans Mono");
  f.setStyleHint(QFont::Monospace);
  f.setPointSize(9);
  return f;
}

QByteArray readWordList(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll().simplified();
}

}  // namespace

ScheduleLexer::ScheduleLexer(QObject* parent) : QsciLexerPython(parent) {
  QStringList names;
  for (const PrimitiveInfo& p : schedulePrimitives()) names << p.name;
  m_primitives = names.join(' ').toUtf8() + " sch";
  setDefaultFont(codeFont());
  setFont(codeFont(), -1);
}

const char* ScheduleLexer::keywords(int set) const {
  if (set == 2) return m_primitives.constData();
  return QsciLexerPython::keywords(set);
}

TirLexer::TirLexer(QObject* parent) : QsciLexerPython(parent), m_builtins(readWordList(":/loom/lexers/tir.txt")) {
  setDefaultFont(codeFont());
  setFont(codeFont(), -1);
}

const char* TirLexer::keywords(int set) const {
  if (set == 2) return m_builtins.constData();
  return QsciLexerPython::keywords(set);
}

AsmLexer::AsmLexer(QObject* parent) : QsciLexerCustom(parent) {
  setDefaultFont(codeFont());
  setFont(codeFont(), -1);
  QFont bold = codeFont();
  bold.setBold(true);
  setFont(bold, Fma);
  setFont(bold, Vector);
}

QString AsmLexer::description(int style) const {
  static const char* names[NumStyles] = {"Default", "Comment", "Label", "Mnemonic", "Vector", "FMA", "Register"};
  return style >= 0 && style < NumStyles ? names[style] : QString();
}

AsmLexer::Style AsmLexer::mnemonicStyle(const QString& mnemonic, const QString& operands) {
  QString m = mnemonic.toLower();
  if (m.contains("fma") || m.contains("fmla") || m.contains("fmadd") || m.contains("fnmadd") || m.contains("fmsub"))
    return Fma;
  static const QRegularExpression vecReg(R"(\b[xyz]mm\d+\b|\bv\d+\.\d*[bhsd]\b|\bq\d+\b)");
  if (vecReg.match(operands.toLower()).hasMatch()) return Vector;
  if (m.startsWith('v') && m.size() > 3) return Vector;
  return Mnemonic;
}

void AsmLexer::styleText(int start, int end) {
  QsciScintilla* ed = editor();
  if (!ed) return;
  int firstLine = int(ed->SendScintilla(QsciScintilla::SCI_LINEFROMPOSITION, long(start)));
  int lastLine = int(ed->SendScintilla(QsciScintilla::SCI_LINEFROMPOSITION, long(end)));
  static const QRegularExpression regRe(R"(%?\b([re]?[a-d]x|[re]?[sd]i|[re]?[sb]p|r\d+[dwb]?|[xyz]mm\d+|k[0-7]|[wxqsdv]\d+(\.\w+)?|sp|rip)\b)");
  for (int line = firstLine; line <= lastLine; ++line) {
    long pos = long(ed->SendScintilla(QsciScintilla::SCI_POSITIONFROMLINE, long(line)));
    QByteArray bytes = ed->text(line).toUtf8();
    startStyling(int(pos));
    QString text = QString::fromUtf8(bytes);
    QString trimmed = text.trimmed();
    auto styleAll = [&](int style) { setStyling(int(bytes.size()), style); };
    if (trimmed.isEmpty()) {
      styleAll(Default);
      continue;
    }
    if (trimmed.startsWith('#') || trimmed.startsWith("//") || trimmed.startsWith(';') || trimmed.startsWith('.')) {
      styleAll(trimmed.endsWith(':') ? Label : Comment);
      continue;
    }
    if (trimmed.endsWith(':')) {
      styleAll(Label);
      continue;
    }
    // An instruction: leading blanks, mnemonic, operands, optional comment. Positions in bytes
    // equal positions in characters for the ASCII text assemblers print (others style Default).
    if (bytes.size() != text.size()) {
      styleAll(Default);
      continue;
    }
    int i = 0;
    while (i < text.size() && text[i].isSpace()) ++i;
    int mStart = i;
    while (i < text.size() && !text[i].isSpace()) ++i;
    QString mnemonic = text.mid(mStart, i - mStart);
    int comment = int(text.indexOf('#', i));
    if (comment < 0) comment = int(text.indexOf("//", i));
    int opEnd = comment < 0 ? int(text.size()) : comment;
    QString operands = text.mid(i, opEnd - i);
    setStyling(mStart, Default);
    setStyling(i - mStart, mnemonicStyle(mnemonic, operands));
    int cur = i;
    auto matches = regRe.globalMatch(operands);
    while (matches.hasNext()) {
      auto m = matches.next();
      int s = i + int(m.capturedStart()), e = i + int(m.capturedEnd());
      if (s > cur) setStyling(s - cur, Default);
      setStyling(e - s, Register);
      cur = e;
    }
    if (opEnd > cur) setStyling(opEnd - cur, Default);
    if (comment >= 0) setStyling(int(text.size()) - comment, Comment);
  }
}

void applyLexerTheme(QsciLexer* lexer, bool dark) {
  QColor paper = dark ? QColor(0x1e, 0x1f, 0x22) : QColor(0xff, 0xff, 0xff);
  QColor fg = dark ? QColor(0xd8, 0xd8, 0xd8) : QColor(0x20, 0x20, 0x20);
  lexer->setDefaultPaper(paper);
  lexer->setDefaultColor(fg);
  lexer->setPaper(paper, -1);
  lexer->setColor(fg, -1);
  QColor comment = dark ? QColor(0x7f, 0x9f, 0x7f) : QColor(0x3f, 0x7f, 0x3f);
  QColor keyword = dark ? QColor(0xc6, 0x8f, 0xf0) : QColor(0x80, 0x20, 0xa0);
  QColor number = dark ? QColor(0xf0, 0xb0, 0x60) : QColor(0xa0, 0x50, 0x00);
  QColor string = dark ? QColor(0xa8, 0xd0, 0x78) : QColor(0x20, 0x80, 0x20);
  QColor ident = dark ? QColor(0x6c, 0xb6, 0xff) : QColor(0x10, 0x50, 0xb0);
  if (auto* asmLexer = qobject_cast<AsmLexer*>(lexer)) {
    asmLexer->setColor(comment, AsmLexer::Comment);
    asmLexer->setColor(dark ? QColor(0xe0, 0xc0, 0x60) : QColor(0x90, 0x60, 0x00), AsmLexer::Label);
    asmLexer->setColor(keyword, AsmLexer::Mnemonic);
    asmLexer->setColor(ident, AsmLexer::Vector);
    asmLexer->setColor(dark ? QColor(0xff, 0x80, 0x50) : QColor(0xd0, 0x40, 0x00), AsmLexer::Fma);
    asmLexer->setColor(dark ? QColor(0xa0, 0xa0, 0xa0) : QColor(0x60, 0x60, 0x60), AsmLexer::Register);
    return;
  }
  lexer->setColor(comment, QsciLexerPython::Comment);
  lexer->setColor(comment, QsciLexerPython::CommentBlock);
  lexer->setColor(number, QsciLexerPython::Number);
  for (int s : {QsciLexerPython::DoubleQuotedString, QsciLexerPython::SingleQuotedString,
                QsciLexerPython::TripleSingleQuotedString, QsciLexerPython::TripleDoubleQuotedString,
                QsciLexerPython::UnclosedString, QsciLexerPython::DoubleQuotedFString, QsciLexerPython::SingleQuotedFString})
    lexer->setColor(string, s);
  lexer->setColor(keyword, QsciLexerPython::Keyword);
  lexer->setColor(ident, QsciLexerPython::HighlightedIdentifier);
  lexer->setColor(ident, QsciLexerPython::Decorator);
  lexer->setColor(fg, QsciLexerPython::Operator);
  lexer->setColor(fg, QsciLexerPython::Identifier);
  lexer->setColor(ident, QsciLexerPython::FunctionMethodName);
  lexer->setColor(ident, QsciLexerPython::ClassName);
  lexer->setPaper(dark ? QColor(0x50, 0x20, 0x20) : QColor(0xff, 0xe0, 0xe0), QsciLexerPython::UnclosedString);
}

}  // namespace loom::views
