// The find bar.
#include "views/FindBar.h"

#include <QCheckBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QToolButton>
#include <Qsci/qsciscintilla.h>

namespace loom::views {

FindBar::FindBar(QWidget* parent) : QWidget(parent) {
  auto* l = new QHBoxLayout(this);
  l->setContentsMargins(2, 1, 2, 1);
  m_where = new QLabel("Find:");
  m_field = new QLineEdit;
  m_field->setPlaceholderText("text (Enter: next, Shift+Enter: previous, Esc: close)");
  m_field->setClearButtonEnabled(true);
  m_case = new QCheckBox("Match case");
  auto* prev = new QToolButton;
  prev->setText("↑");
  prev->setToolTip("Previous match (Shift+F3)");
  auto* next = new QToolButton;
  next->setText("↓");
  next->setToolTip("Next match (F3)");
  auto* close = new QToolButton;
  close->setText("✕");
  close->setToolTip("Close (Esc)");
  m_info = new QLabel;
  m_info->setMinimumWidth(10);
  m_info->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  l->addWidget(m_where);
  l->addWidget(m_field, 2);
  l->addWidget(prev);
  l->addWidget(next);
  l->addWidget(m_case);
  l->addWidget(m_info, 1);
  l->addWidget(close);
  connect(next, &QToolButton::clicked, this, [this] { findNext(false); });
  connect(prev, &QToolButton::clicked, this, [this] { findNext(true); });
  connect(close, &QToolButton::clicked, this, &QWidget::hide);
  connect(m_field, &QLineEdit::returnPressed, this, [this] {
    findNext(QGuiApplication::keyboardModifiers() & Qt::ShiftModifier);
  });
  connect(m_field, &QLineEdit::textEdited, this, [this] {
    // As you type: search again from the start of the current selection.
    if (m_target) {
      int line = 0, index = 0, l2 = 0, i2 = 0;
      m_target->getSelection(&line, &index, &l2, &i2);
      if (line >= 0 && l2 >= 0 && (line != l2 || index != i2)) m_target->setCursorPosition(line, index);
    }
    findNext(false);
  });
  auto* esc = new QShortcut(QKeySequence(Qt::Key_Escape), this, this, &QWidget::hide, Qt::WidgetWithChildrenShortcut);
  Q_UNUSED(esc);
  hide();
}

void FindBar::setTarget(QsciScintilla* target) {
  m_target = target;
  m_where->setText(target ? QString("Find in %1:").arg(target->objectName().isEmpty() ? QString("text") : target->objectName()) : QString("Find:"));
}

void FindBar::activate() {
  show();
  if (m_target && m_target->hasSelectedText() && !m_target->selectedText().contains('\n')) m_field->setText(m_target->selectedText());
  m_field->setFocus();
  m_field->selectAll();
}

bool FindBar::findNext(bool backwards) {
  QString text = m_field->text();
  if (!m_target || text.isEmpty()) {
    m_info->clear();
    return false;
  }
  bool found;
  if (backwards) {
    // findFirst searches backwards from the caret, which sits after the current match.
    int line = 0, index = 0, l2 = 0, i2 = 0;
    m_target->getSelection(&line, &index, &l2, &i2);
    if (line >= 0) m_target->setCursorPosition(line, index);
    found = m_target->findFirst(text, false, m_case->isChecked(), false, true, false);
  } else {
    found = m_target->findFirst(text, false, m_case->isChecked(), false, true, true);
  }
  // Counts the matches for the info text.
  QString all = m_target->text();
  int count = all.count(text, m_case->isChecked() ? Qt::CaseSensitive : Qt::CaseInsensitive);
  if (found) {
    int line = 0, index = 0;
    m_target->getCursorPosition(&line, &index);
    m_info->setText(QString("%1 match%2 · line %3").arg(count).arg(count == 1 ? "" : "es").arg(line + 1));
    m_field->setStyleSheet({});
  } else {
    m_info->setText("no match");
    m_field->setStyleSheet("background: #f8d0d0");
  }
  return found;
}

}  // namespace loom::views
