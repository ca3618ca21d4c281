// Model > Input shapes...: the concrete shapes of a model's inputs (symbolic dims such as batch).
#pragma once
#include <QDialog>
#include <QMap>

#include "views/StudioTypes.h"

class QLabel;
class QLineEdit;

namespace loom::views {

class InputShapesDialog : public QDialog {
  Q_OBJECT
public:
  /// One row per input: its declared dims ("batch, 3, 224, 224") and an editable shape that
  /// starts as the one in use.
  InputShapesDialog(const QVector<ModelInput>& inputs, QWidget* parent = nullptr);
  /// The shapes entered, by input name (valid after accept()).
  QMap<QString, QVector<qint64>> shapes() const { return m_shapes; }
  /// The line edit of input `name` (tests type into it).
  QLineEdit* editFor(const QString& name) const;
  /// Parses "1, 3, 224, 224" or "[1,3,224,224]" for an input of `rank` dims; false with `error`.
  static bool parseDims(const QString& text, int rank, QVector<qint64>& out, QString* error);

public slots:
  void accept() override;

private:
  /// "batch = 2, W = 320": the values input `i`'s symbolic dims take in its edit ("?" while it
  /// does not parse); empty for a static input.
  QString symbolValues(int i) const;

  QVector<ModelInput> m_inputs;
  QVector<QLineEdit*> m_edits;
  QVector<QLabel*> m_notes;
  QStringList m_initial;  ///< the edits' text as the dialog opened
  QLabel* m_error = nullptr;
  QMap<QString, QVector<qint64>> m_shapes;
};

}  // namespace loom::views
