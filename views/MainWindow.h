// The Studio's main window: docks around the schedule editor, menus, status bar, session files.
#pragma once
#include <QMainWindow>

#include "views/StudioTypes.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QToolButton;
class QStandardItemModel;
class QTableView;
class QTreeView;
class QPlainTextEdit;
class QHBoxLayout;
class QMenu;
class QSpinBox;

namespace loom::views {

class Session;
class ScheduleEditor;
class CodePane;
class GraphView;
class ProblemsModel;
class TuningMonitor;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  Session* session() const { return m_session; }
  ScheduleEditor* editor() const { return m_editor; }
  CodePane* tirPane() const { return m_tirPane; }
  CodePane* loweredPane() const { return m_loweredPane; }
  CodePane* asmPane() const { return m_asmPane; }
  QComboBox* passBox() const { return m_passBox; }
  QComboBox* targetBox() const { return m_targetBox; }
  GraphView* graphView() const { return m_graph; }
  ProblemsModel* problems() const { return m_problems; }
  QStandardItemModel* loopModel() const { return m_loopModel; }
  QStandardItemModel* propertiesModel() const { return m_propsModel; }
  QStandardItemModel* passModel() const { return m_passModel; }

  /// Picks preset `name` with parameter overrides (the preset bar follows).
  void setPreset(const QString& name, const QMap<QString, qint64>& params = {});
  void setScheduleText(const QString& text);
  void openModel(const QString& path);
  /// Opens the kernel of fused cluster `cluster` (of the fused view) in the schedule editor: the
  /// editor starts with a comment and no schedule; the panes show its TIR, lowered IR and code.
  /// Waits for the model's kernels when they are still being extracted. False when the cluster
  /// has no kernel (it computes nothing) or does not exist.
  bool openCluster(int cluster);
  /// Opens kernel `index` of the session's model groups in the schedule editor.
  bool openGroup(int index);
  /// Writes / reads a session file (JSON: workspace, runs, layout, theme); false on failure
  /// (a message box explains unless quiet).
  bool saveSession(const QString& path, bool quiet = false);
  bool loadSession(const QString& path, bool quiet = false);
  void setDarkTheme(bool dark);
  bool darkTheme() const { return m_dark; }
  /// Selects lowered-IR `line`'s loop and colours it, its inner loops and their assembly.
  void linkLoweredLine(int line);
  void linkAsmLine(int line);
  void linkTirLine(int line);
  TuningMonitor* tuningMonitor() const { return m_tuning; }
  /// Opens the Export dialog for the session's model (File > Export Model Package).
  void showExportDialog();
  /// Opens the diff of two rows of the Runs table.
  void diffRuns(int rowA, int rowB);

protected:
  void closeEvent(QCloseEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;
  void showEvent(QShowEvent* e) override;

private:
  void buildMenus();
  /// Dock sizes of a first start (no saved layout).
  void applyDefaultLayout();
  void buildDocks();
  void rebuildParams();
  void onCompiled(const CompileResult& r);
  void showPass(int index);
  void addRecent(const QString& path);
  void updateRecentMenu();
  void updateRecentMenu(const QStringList& recent);
  void updateTitle();
  bool maybeSave();
  void showProperties(const GraphNode& n);
  /// The preset bar shows fused group `name` (with `details`) instead of a preset.
  void showGroupInPresetBar(const QString& name, const QString& details);

  Session* m_session = nullptr;
  ScheduleEditor* m_editor = nullptr;
  CodePane *m_tirPane = nullptr, *m_loweredPane = nullptr, *m_asmPane = nullptr;
  QComboBox *m_presetBox = nullptr, *m_targetBox = nullptr, *m_passBox = nullptr;
  QHBoxLayout* m_paramLayout = nullptr;
  QVector<QSpinBox*> m_paramSpins;
  GraphView* m_graph = nullptr;
  ProblemsModel* m_problems = nullptr;
  QStandardItemModel *m_loopModel = nullptr, *m_propsModel = nullptr, *m_passModel = nullptr;
  QTableView* m_runsView = nullptr;
  QPlainTextEdit* m_log = nullptr;
  QLabel* m_status = nullptr;
  QProgressBar* m_progress = nullptr;
  QToolButton* m_cancel = nullptr;
  QMenu* m_recentMenu = nullptr;
  QMenu* m_viewMenu = nullptr;
  QString m_sessionPath;
  bool m_dark = false;
  bool m_updatingPreset = false;
  int m_selectedLoop = -1;
  bool m_layoutApplied = false;
  TuningMonitor* m_tuning = nullptr;
  int m_pendingCluster = -1;  ///< opened before the model's kernels were extracted
  QString m_groupDetails;     ///< the preset bar's text for the open fused group
  /// The editor texts an opened fused group starts from: for CPU targets (header + the default
  /// schedule's script) and for GPU targets (header only: an empty script gets the default GPU
  /// schedule). Switching between CPU and GPU swaps one for the other while the text is untouched.
  QString m_groupCpuText, m_groupGpuText;
};

}  // namespace loom::views
