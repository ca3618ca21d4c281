// The schedule script editor: primitive and name completion, call tips, error squiggles.
#pragma once
#include <QHash>
#include <Qsci/qsciscintilla.h>

namespace loom::views {

class ScheduleEditor : public QsciScintilla {
  Q_OBJECT
public:
  /// The indicator that marks the failing statement.
  static constexpr int kErrorIndicator = 8;

  explicit ScheduleEditor(QWidget* parent = nullptr);

  /// Squiggles 1-based `line` from `column` (1-based) to `endColumn` (0: end of line) and keeps
  /// `message` for the tooltip; line 0 clears.
  void setError(int line, int column, int endColumn, const QString& message);
  int errorLine() const { return m_errorLine; }
  QString errorMessage() const { return m_errorMessage; }
  /// True when the error indicator covers some character of 1-based `line`.
  bool hasErrorIndicator(int line) const;

  /// Block names of the scheduled function (offered in completion as quoted strings).
  void setBlockNames(const QStringList& names);
  /// Names a user may type at 1-based `line`: script variables assigned above it, blocks.
  QStringList namesInScope(int line) const;
  /// The call tip of primitive `name` ("split(loop, factors, ...)  doc"), or empty.
  QString callTipOf(const QString& name) const;
  /// The schedule primitives offered after `sch.`, in order.
  const QStringList& primitives() const { return m_primitives; }
  void setDark(bool dark);

private:
  void onCharAdded(int ch);
  void onUserListActivated(int id, const QString& text);
  void showDwellTip(int position, int x, int y);
  QString wordBeforeCaret() const;

  class QsciLexer* m_lexer = nullptr;
  QStringList m_primitives;
  QHash<QString, QString> m_tips;
  QStringList m_blocks;
  int m_errorLine = 0;
  QString m_errorMessage;
};

}  // namespace loom::views
