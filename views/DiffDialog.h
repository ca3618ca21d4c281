// Side-by-side diff of two runs: their schedule scripts and their lowered IR, changed lines coloured.
#pragma once
#include <QDialog>

#include "views/StudioTypes.h"

namespace loom::views {

/// For each line of `a` and `b`, whether it is outside their longest common subsequence.
struct LineDiff {
  QVector<bool> removed;  ///< per line of a
  QVector<bool> added;    ///< per line of b
};
LineDiff diffLines(const QStringList& a, const QStringList& b);

class DiffDialog : public QDialog {
  Q_OBJECT
public:
  DiffDialog(const RunRecord& a, const RunRecord& b, bool dark, QWidget* parent = nullptr);
};

}  // namespace loom::views
