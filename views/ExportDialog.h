// The Export dialog: compiles the open model with a target, opt level and tuning records, writes the package.
#pragma once
#include <QDialog>
#include <QPointer>
#include <QThread>
#include <QStringList>
#include <atomic>
#include <memory>
#include <vector>

#include "views/StudioTypes.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStandardItemModel;
class QTableView;

namespace loom::views {

class Session;

/// One exported file and its size, as the dialog lists it.
struct ExportedMember {
  QString name;
  qint64 bytes = 0;
};

/// What an export produced: the file, its members (a .tar's files; a .so is one member), how many
/// kernels took a tuning record, and the notes of the export (e.g. a cross target without a linker).
struct ExportOutcome {
  bool ok = false;
  QString error;  ///< when !ok: what failed ("cancelled" when cancelled)
  QString path;
  QVector<ExportedMember> members;
  int kernels = 0, kernelsTuned = 0;
  QStringList notes;
};

/// A dialog over the session's model: target (llvm for this CPU, a cross target, or C), opt level,
/// tuning records file and output path (.tar package or .so library). Export compiles and writes
/// off the UI thread with a progress bar (kernels lowered, then code generation) and Cancel (the
/// step in progress finishes, nothing is written), then lists the written members and their sizes.
/// Failures are shown in the dialog.
class ExportDialog : public QDialog {
  Q_OBJECT
public:
  /// `modelPath` / `module`: the model to export, as the session imported it (ModelData::module;
  /// null while it loads: Export then says so).
  ExportDialog(const QString& modelPath, std::shared_ptr<const graph::Module> module, QWidget* parent = nullptr);
  /// The dialog for the session's open model.
  explicit ExportDialog(Session* session, QWidget* parent = nullptr);
  ~ExportDialog() override;

  void setTarget(const QString& target);
  void setOptLevel(int level);
  /// Conv layout: "NCHW", "NCHWc", or "" (the opt level's default); the session's dialog starts
  /// with the model view's layout, the one its kernels were tuned in.
  void setLayout(const QString& layout);
  void setRecordsPath(const QString& path);
  /// A model with symbolic input dims exports either as a dynamic module (the dims stay symbolic:
  /// the package runs at any input shape) or as a static one at the session's concrete shapes.
  /// False when the dialog has no dynamic module (or no static one for `dynamic` false).
  bool setDynamic(bool dynamic);
  bool isDynamic() const;
  void setOutputPath(const QString& path);
  QString outputPath() const;

  /// Starts the export (the Export button); false when the form is incomplete (the reason is
  /// shown in the dialog).
  bool startExport();
  /// Drops the running export: the step in progress finishes, the output is not written.
  void cancelExport();
  bool isRunning() const { return m_running; }
  /// The last finished export.
  const ExportOutcome& outcome() const { return m_outcome; }
  QStandardItemModel* membersModel() const { return m_members; }
  QProgressBar* progressBar() const { return m_progress; }
  QString statusText() const;

  /// The default output path for `modelPath`: NAME.tar in the session's folder (`sessionPath`'s),
  /// or in the current folder when the session is not saved yet; never beside the model (its
  /// folder may be a read-only model zoo). NAME is the model's name (its folder's for model.onnx).
  static QString defaultOutputPath(const QString& modelPath, const QString& sessionPath = {});

signals:
  void exportFinished(bool ok);

protected:
  void reject() override;

private:
  void buildUi();
  void onProgress(quint64 run, const QString& what, int done, int total);
  void onFinished(quint64 run, const ExportOutcome& outcome);
  void updateButtons();

  QString m_modelPath;
  std::shared_ptr<const graph::Module> m_module;
  /// The module with symbolic dims kept (null for a static model or a dialog without a session).
  std::shared_ptr<const graph::Module> m_dynamicModule;
  std::map<std::string, int64_t> m_symbolBounds;  ///< recorded in a dynamic export (ModelData::symbolBounds)
  QString m_staticShapes, m_dynamicShapes;  ///< "data:[1,3,16,16]" / "data:[N,3,16,16]"
  std::shared_ptr<std::atomic<bool>> m_cancel;
  QPointer<QThread> m_thread;
  quint64 m_run = 0;
  bool m_running = false;
  ExportOutcome m_outcome;

  QLabel* m_modelLabel = nullptr;
  QComboBox* m_target = nullptr;
  QSpinBox* m_optLevel = nullptr;
  QComboBox* m_layout = nullptr;
  QComboBox* m_shapes = nullptr;  ///< dynamic / static at the concrete shapes (symbolic models only)
  QLineEdit *m_records = nullptr, *m_output = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QPlainTextEdit* m_messages = nullptr;
  QStandardItemModel* m_members = nullptr;
  QTableView* m_membersView = nullptr;
  QPushButton *m_export = nullptr, *m_cancelButton = nullptr, *m_close = nullptr;
};

}  // namespace loom::views
