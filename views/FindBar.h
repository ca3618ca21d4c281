// Edit > Find (Ctrl+F): a find bar over the schedule editor and the code panes (TIR, lowered IR,
// assembly): finds as you type, Enter / F3 for the next match, Shift+Enter / Shift+F3 back.
#pragma once
#include <QPointer>
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QsciScintilla;

namespace loom::views {

class FindBar : public QWidget {
  Q_OBJECT
public:
  explicit FindBar(QWidget* parent = nullptr);
  /// Searches in `target` from now on (the editor or pane that had the focus last).
  void setTarget(QsciScintilla* target);
  QsciScintilla* target() const { return m_target; }
  /// Shows the bar with the target's selection (or the last text) and focuses the field.
  void activate();
  /// Finds the next (or previous) match of the field's text; false when there is none.
  bool findNext(bool backwards = false);
  QLineEdit* field() const { return m_field; }
  QLabel* info() const { return m_info; }

private:
  QPointer<QsciScintilla> m_target;
  QLineEdit* m_field = nullptr;
  QCheckBox* m_case = nullptr;
  QLabel* m_info = nullptr;
  QLabel* m_where = nullptr;
};

}  // namespace loom::views
