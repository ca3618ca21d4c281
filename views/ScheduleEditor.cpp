// The schedule editor: QScintilla with the schedule lexer, completion lists, call tips and the
// failing statement's squiggle.
#include "views/ScheduleEditor.h"

#include <QRegularExpression>
#include <QToolTip>

#include "views/Lexers.h"
#include "views/OperatorJobs.h"

namespace loom::views {

namespace {
constexpr int kPrimitiveList = 1;
constexpr int kNameList = 2;
}  // namespace

ScheduleEditor::ScheduleEditor(QWidget* parent) : QsciScintilla(parent) {
  setUtf8(true);
  m_lexer = new ScheduleLexer(this);
  setLexer(m_lexer);
  for (const PrimitiveInfo& p : schedulePrimitives()) {
    m_primitives << p.name;
    m_tips.insert(p.name, p.doc.isEmpty() ? p.signature : p.signature + "\n" + p.doc);
  }
  setMarginType(0, NumberMargin);
  setMarginWidth(0, "0000");
  setMarginLineNumbers(0, true);
  setAutoIndent(true);
  setIndentationsUseTabs(false);
  setTabWidth(4);
  setCaretLineVisible(true);
  setBraceMatching(SloppyBraceMatch);
  setAutoCompletionSource(AcsNone);  // lists are shown by onCharAdded
  setAutoCompletionCaseSensitivity(true);
  indicatorDefine(SquiggleIndicator, kErrorIndicator);
  setIndicatorForegroundColor(QColor(0xe0, 0x20, 0x20), kErrorIndicator);
  SendScintilla(SCI_SETMOUSEDWELLTIME, 400);
  connect(this, &QsciScintilla::SCN_CHARADDED, this, &ScheduleEditor::onCharAdded);
  connect(this, &QsciScintilla::userListActivated, this, &ScheduleEditor::onUserListActivated);
  connect(this, &QsciScintilla::SCN_DWELLSTART, this, &ScheduleEditor::showDwellTip);
  connect(this, &QsciScintilla::SCN_DWELLEND, this, [](int, int, int) { QToolTip::hideText(); });
  setDark(false);
}

void ScheduleEditor::setDark(bool dark) {
  applyLexerTheme(m_lexer, dark);
  setCaretLineBackgroundColor(dark ? QColor(0x2a, 0x2d, 0x33) : QColor(0xf2, 0xf4, 0xf8));
  setMarginsBackgroundColor(dark ? QColor(0x25, 0x26, 0x2a) : QColor(0xf0, 0xf0, 0xf0));
  setMarginsForegroundColor(dark ? QColor(0x90, 0x90, 0x90) : QColor(0x80, 0x80, 0x80));
  setCaretForegroundColor(dark ? Qt::white : Qt::black);
}

void ScheduleEditor::setError(int line, int column, int endColumn, const QString& message) {
  int lastLine = lines() - 1;
  clearIndicatorRange(0, 0, lastLine, lineLength(lastLine), kErrorIndicator);
  m_errorLine = line;
  m_errorMessage = message;
  if (line < 1 || line > lines()) return;
  QString lineText = text(line - 1);
  int len = int(lineText.size());
  while (len > 0 && (lineText[len - 1] == '\n' || lineText[len - 1] == '\r')) --len;
  int from = std::clamp(column - 1, 0, std::max(0, len - 1));
  int to = endColumn > column ? std::min(endColumn - 1, len) : len;
  if (to <= from) {  // an empty or blank line: mark the whole line
    from = 0;
    to = std::max(len, 1);
  }
  fillIndicatorRange(line - 1, from, line - 1, to, kErrorIndicator);
}

bool ScheduleEditor::hasErrorIndicator(int line) const {
  if (line < 1 || line > lines()) return false;
  auto* self = const_cast<ScheduleEditor*>(this);
  long start = self->SendScintilla(SCI_POSITIONFROMLINE, long(line - 1));
  long end = self->SendScintilla(SCI_GETLINEENDPOSITION, long(line - 1));
  for (long p = start; p <= end; ++p)
    if (self->SendScintilla(SCI_INDICATORVALUEAT, long(kErrorIndicator), p) != 0) return true;
  return false;
}

void ScheduleEditor::setBlockNames(const QStringList& names) { m_blocks = names; }

QStringList ScheduleEditor::namesInScope(int line) const {
  QStringList names;
  static const QRegularExpression assign(R"(^\s*([A-Za-z_][\w\s,()\[\]]*?)\s*=(?!=))");
  static const QRegularExpression ident(R"([A-Za-z_]\w*)");
  for (int l = 0; l < std::min(line - 1, lines()); ++l) {
    auto m = assign.match(text(l));
    if (!m.hasMatch()) continue;
    auto ids = ident.globalMatch(m.captured(1));
    while (ids.hasNext()) {
      QString n = ids.next().captured();
      if (!names.contains(n)) names << n;
    }
  }
  for (const QString& b : m_blocks) names << "\"" + b + "\"";
  return names;
}

QString ScheduleEditor::callTipOf(const QString& name) const { return m_tips.value(name); }

QString ScheduleEditor::wordBeforeCaret() const {
  int line, index;
  getCursorPosition(&line, &index);
  QString before = text(line).left(index);
  int i = int(before.size());
  while (i > 0 && (before[i - 1].isLetterOrNumber() || before[i - 1] == '_')) --i;
  return before.mid(i);
}

void ScheduleEditor::onCharAdded(int ch) {
  int line, index;
  getCursorPosition(&line, &index);
  QString before = text(line).left(index);
  if (ch == '.') {
    if (before.endsWith("sch.")) showUserList(kPrimitiveList, m_primitives);
    return;
  }
  if (ch == '(') {
    static const QRegularExpression call(R"(sch\.(\w+)\($)");
    auto m = call.match(before);
    if (m.hasMatch() && m_tips.contains(m.captured(1))) {
      QByteArray tip = m_tips.value(m.captured(1)).toUtf8();
      SendScintilla(SCI_CALLTIPSHOW, SendScintilla(SCI_GETCURRENTPOS), tip.constData());
    }
    return;
  }
  if (ch == ')') {
    SendScintilla(SCI_CALLTIPCANCEL);
    return;
  }
  if (!(QChar(ch).isLetterOrNumber() || ch == '_')) return;
  QString word = wordBeforeCaret();
  if (word.size() < 1 || isListActive()) return;
  if (before.endsWith("sch." + word)) {
    QStringList matches = m_primitives.filter(QRegularExpression("^" + QRegularExpression::escape(word)));
    if (!matches.isEmpty()) showUserList(kPrimitiveList, m_primitives);
    return;
  }
  QStringList matches;
  for (const QString& n : namesInScope(line + 1)) {
    QString bare = n.startsWith('"') ? n.mid(1) : n;
    if (bare.startsWith(word) && bare != word) matches << n;
  }
  if (!matches.isEmpty()) showUserList(kNameList, matches);
}

void ScheduleEditor::onUserListActivated(int id, const QString& chosen) {
  QString word = wordBeforeCaret();
  int line, index;
  getCursorPosition(&line, &index);
  QString replacement = chosen;
  if (id == kNameList && chosen.startsWith('"') && index > word.size() && text(line)[index - word.size() - 1] == '"')
    replacement = chosen.mid(1);  // the opening quote is already typed
  setSelection(line, index - int(word.size()), line, index);
  replaceSelectedText(replacement);
}

void ScheduleEditor::showDwellTip(int position, int x, int y) {
  if (m_errorLine < 1 || position < 0) return;
  if (SendScintilla(SCI_INDICATORVALUEAT, long(kErrorIndicator), long(position)) == 0) return;
  QToolTip::showText(viewport()->mapToGlobal(QPoint(x, y)), m_errorMessage, viewport());
}

}  // namespace loom::views
