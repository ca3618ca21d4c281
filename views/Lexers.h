// Syntax colouring for the Studio's editors: schedule scripts, TIR text and assembly.
#pragma once
#include <Qsci/qscilexercustom.h>
#include <Qsci/qscilexerpython.h>
#include <QStringList>

namespace loom::views {

/// Python colouring with the schedule primitives as highlighted identifiers.
class ScheduleLexer : public QsciLexerPython {
  Q_OBJECT
public:
  explicit ScheduleLexer(QObject* parent = nullptr);
  const char* keywords(int set) const override;

private:
  QByteArray m_primitives;
};

/// TVMScript (TIR) colouring: Python with the T.* builtins (from resources/lexers/tir.txt).
class TirLexer : public QsciLexerPython {
  Q_OBJECT
public:
  explicit TirLexer(QObject* parent = nullptr);
  const char* keywords(int set) const override;

private:
  QByteArray m_builtins;
};

/// Assembly colouring: directives and comments, labels, mnemonics, and vector / FMA instructions
/// in their own styles so they stand out.
class AsmLexer : public QsciLexerCustom {
  Q_OBJECT
public:
  enum Style { Default, Comment, Label, Mnemonic, Vector, Fma, Register, NumStyles };
  explicit AsmLexer(QObject* parent = nullptr);
  const char* language() const override { return "Assembly"; }
  QString description(int style) const override;
  void styleText(int start, int end) override;
  /// The style of an instruction's mnemonic ("vfmadd231ps" -> Fma); exposed for tests.
  static Style mnemonicStyle(const QString& mnemonic, const QString& operands);
};

/// Sets the colours of `lexer`'s styles for the light or dark theme.
void applyLexerTheme(QsciLexer* lexer, bool dark);

}  // namespace loom::views
