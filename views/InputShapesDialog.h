// Model > Input shapes...: the shapes of a model's inputs in `loom compile`'s --input-shapes grammar
// (core/driver/InputShapes.h): concrete values for the kernels, symbolic dims, `?` and bounds for
// the graph and a dynamic export.
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
  /// starts as the one in use. `symbolic`: the inputs set to stay symbolic
  /// (Session::symbolicInputShapes, "x:[1,3,48,W<=2048]"); their rows start as that text, with
  /// the values in use (`W<=2048=320`).
  InputShapesDialog(const QVector<ModelInput>& inputs, QWidget* parent = nullptr, const QString& symbolic = {});
  /// The concrete shapes entered, by input name (valid after accept()): a number per dim (`W=320`
  /// counts), 0 where a symbolic dim has none (the model's test_data_set_0 fills it, else the input
  /// has no concrete shape); only inputs that differ from the file's static dims.
  QMap<QString, QVector<qint64>> shapes() const { return m_shapes; }
  /// The inputs entered with a symbolic dim (a name, `?`, a bound), values dropped:
  /// "x:[1,3,48,W<=2048]" (valid after accept()); empty when every dim is a number.
  QString symbolicShapes() const { return m_symbolic; }
  /// The line edit of input `name` (tests type into it).
  QLineEdit* editFor(const QString& name) const;
  /// The error shown under the rows ("" when none).
  QString errorText() const;

public slots:
  void accept() override;

private:
  /// "batch = 2, W <= 2048 (no value)": what input `i`'s symbolic dims are as typed ("?" while it
  /// does not parse); empty for a static input typed as numbers.
  QString symbolValues(int i) const;
  void showError(int row, const QString& text);

  QVector<ModelInput> m_inputs;
  QVector<QLineEdit*> m_edits;
  QVector<QLabel*> m_notes;
  QStringList m_initial;  ///< the edits' text as the dialog opened
  QLabel* m_error = nullptr;
  QLabel* m_errorCaret = nullptr;  ///< the grammar error's text and caret, fixed-width
  QMap<QString, QVector<qint64>> m_shapes;
  QString m_symbolic;
};

}  // namespace loom::views
