// A read-only code pane (TIR, lowered IR, assembly) with per-line link colours and line clicks.
#pragma once
#include <QHash>
#include <Qsci/qsciscintilla.h>

namespace loom::views {

class CodePane : public QsciScintilla {
  Q_OBJECT
public:
  /// The colours lines can be linked with (Compiler-Explorer style), cycled by index.
  static constexpr int kNumLinkColors = 8;
  static QColor linkColor(int index, bool dark);

  explicit CodePane(QWidget* parent = nullptr);
  /// Replaces the text, keeping the first visible line when the text is similar.
  void setCode(const QString& text);
  /// Colours line L (1-based) with link colour colors[L]; other lines lose theirs.
  void setLineColors(const QHash<int, int>& colors);
  const QHash<int, int>& lineColors() const { return m_colors; }
  void setDark(bool dark);
  /// Scrolls so that 1-based `line` is visible.
  void revealLine(int line);

signals:
  /// The user clicked (or moved the caret to) 1-based `line`.
  void lineClicked(int line);

private:
  QHash<int, int> m_colors;
  bool m_dark = false;
  bool m_settingText = false;
};

}  // namespace loom::views
