// The run diff dialog and its line diff (longest common subsequence of lines).
#include "views/DiffDialog.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include "views/CodePane.h"
#include "views/Lexers.h"

namespace loom::views {

LineDiff diffLines(const QStringList& a, const QStringList& b) {
  qsizetype n = a.size(), m = b.size();
  LineDiff d{QVector<bool>(n, true), QVector<bool>(m, true)};
  if (n * m > 4'000'000) {  // too large for the table: compare line by line
    for (qsizetype i = 0; i < std::min(n, m); ++i) d.removed[i] = d.added[i] = a[i] != b[i];
    return d;
  }
  QVector<QVector<int>> len(n + 1, QVector<int>(m + 1, 0));
  for (qsizetype i = n - 1; i >= 0; --i)
    for (qsizetype j = m - 1; j >= 0; --j)
      len[i][j] = a[i] == b[j] ? len[i + 1][j + 1] + 1 : std::max(len[i + 1][j], len[i][j + 1]);
  qsizetype i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] == b[j]) {
      d.removed[i++] = false;
      d.added[j++] = false;
    } else if (len[i + 1][j] >= len[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  return d;
}

namespace {

QWidget* diffPage(const QString& left, const QString& right, bool tir, bool dark) {
  auto* split = new QSplitter(Qt::Horizontal);
  auto* a = new CodePane;
  auto* b = new CodePane;
  for (CodePane* p : {a, b}) {
    QsciLexer* lexer = tir ? static_cast<QsciLexer*>(new TirLexer(p)) : new ScheduleLexer(p);
    applyLexerTheme(lexer, dark);
    p->setLexer(lexer);
    p->setDark(dark);
    split->addWidget(p);
  }
  a->setCode(left);
  b->setCode(right);
  LineDiff d = diffLines(left.split('\n'), right.split('\n'));
  QHash<int, int> ca, cb;
  for (int i = 0; i < d.removed.size(); ++i)
    if (d.removed[i]) ca[i + 1] = 3;  // pink: only on the left
  for (int i = 0; i < d.added.size(); ++i)
    if (d.added[i]) cb[i + 1] = 1;  // green: only on the right
  a->setLineColors(ca);
  b->setLineColors(cb);
  return split;
}

QString title(const RunRecord& r) {
  return QString("#%1 · schedule v%2 · %3").arg(r.id).arg(r.scheduleVersion).arg(r.ok ? QString::number(r.medianMs, 'f', 4) + " ms" : QString("failed"));
}

}  // namespace

DiffDialog::DiffDialog(const RunRecord& a, const RunRecord& b, bool dark, QWidget* parent) : QDialog(parent) {
  setWindowTitle(QString("Diff of run #%1 and run #%2").arg(a.id).arg(b.id));
  resize(1100, 700);
  auto* layout = new QVBoxLayout(this);
  auto* heads = new QHBoxLayout;
  heads->addWidget(new QLabel(title(a)), 1);
  heads->addWidget(new QLabel(title(b)), 1);
  layout->addLayout(heads);
  auto* tabs = new QTabWidget;
  tabs->addTab(diffPage(a.schedule, b.schedule, false, dark), "Schedule");
  tabs->addTab(diffPage(a.loweredTir, b.loweredTir, true, dark), "Lowered IR");
  tabs->addTab(diffPage(a.assembly.isEmpty() ? QString("(no code kept for this run)\n") : a.assembly,
                        b.assembly.isEmpty() ? QString("(no code kept for this run)\n") : b.assembly, true, dark),
               "Assembly");
  layout->addWidget(tabs, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

}  // namespace loom::views
