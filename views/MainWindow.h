// The Studio's main window: docks around the schedule editor, menus, status bar, session files.
#pragma once
#include <QJsonArray>
#include <QJsonObject>
#include <QMainWindow>
#include <functional>

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

class QTimer;

namespace loom::views {

class Session;
class ScheduleEditor;
class CodePane;
class GraphView;
class ProblemsModel;
class TuningMonitor;
class ProfileDock;
class FindBar;

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
  /// Crash recovery. While the session has unsaved changes, its state and the editor's text are
  /// written every few seconds (setAutosaveInterval; 5 s) to autosavePath(); a save, a load or a
  /// clean close removes the file, so one found at start was left by a crash. offerRestore()
  /// asks (a message box, or the restore handler) whether to restore it: yes puts it back
  /// (unsaved, under its session's name), no deletes it. False when there was nothing to
  /// restore or it was declined.
  static QString autosavePath();
  bool writeAutosave();
  bool offerRestore();
  void setAutosaveInterval(int ms);
  /// Replaces the asking of offerRestore (a message box) with `ask`, e.g. in tests.
  void setRestoreHandler(std::function<bool(const QString&)> ask) { m_askRestore = std::move(ask); }
  void setDarkTheme(bool dark);
  bool darkTheme() const { return m_dark; }
  /// Selects lowered-IR `line`'s loop and colours it, its inner loops and their assembly.
  void linkLoweredLine(int line);
  void linkAsmLine(int line);
  void linkTirLine(int line);
  TuningMonitor* tuningMonitor() const { return m_tuning; }
  ProfileDock* profileDock() const { return m_profile; }
  /// Model > Profile: profiles the open model in a worker process (the Profile dock comes forward;
  /// when it finishes, the graph takes the heat overlay). False when no model is open.
  bool profileModel();
  /// Model > Input Shapes...: a dialog for the concrete shapes of the model's inputs; the model
  /// reloads with them. True when shapes were entered and the reload started.
  bool showInputShapesDialog();
  /// " · symbolic dims of data at data:[1,3,48,320] (…)": the status bar's words on `m`'s input shapes.
  static QString inputShapesSummary(const ModelData& m);
  /// Asks before replacing edited schedule text (`why` says what replaces it); true to go on.
  /// The editor's text is "edited" when it differs from what the Studio last put there.
  bool confirmReplaceEditor(const QString& why);
  /// Replaces the asking (a message box) with `confirm`, e.g. in tests.
  void setConfirmHandler(std::function<bool(const QString&)> confirm) { m_confirm = std::move(confirm); }
  /// The editor's text for a preset with no schedule yet.
  static QString presetStartText();
  /// Replaces the editor's text as one undoable step (Ctrl+Z brings the old text back).
  void replaceEditorText(const QString& text);
  /// Edit > Find (Ctrl+F): the find bar over the editor and the code panes.
  FindBar* findBar() const { return m_findBar; }
  /// Assembly filters (as Compiler Explorer's; all on by default).
  void setAsmFilters(bool directives, bool unusedLabels, bool comments);
  /// The asmLines index shown on each line of the Assembly pane.
  const QVector<int>& asmShownLines() const { return m_asmShown; }
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
  /// The session file's JSON (workspace, layout, tuning form and results, profiles, theme).
  QJsonObject sessionJson() const;
  void showProperties(const GraphNode& n);
  /// The preset bar shows fused group `name` (with `details`) instead of a preset.
  void showGroupInPresetBar(const QString& name, const QString& details);
  /// Leaves the open fused group for preset `preset` (its schedule starts empty).
  void leaveGroup(const QString& preset);
  void applyProfileOverlay();
  void showAssembly();
  void showReference();
  void updateProblemsTitle(int count);


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
  ProfileDock* m_profile = nullptr;
  FindBar* m_findBar = nullptr;
  std::function<bool(const QString&)> m_confirm;
  std::function<bool(const QString&)> m_askRestore;
  QTimer* m_autosaveTimer = nullptr;
  QString m_editorBaseline;   ///< what the Studio last put in the editor (edits are the user's)
  QString m_lastPreset = "matmul";
  QJsonArray m_pendingProfiles;  ///< profiles of a session being loaded, until its model is
  QJsonArray m_restoreProfiles;  ///< ... and until its kernels are (the overlay needs them)
  QString m_offeredRecords;   ///< tuning records the Profile dock was given after a tuning
  QString m_groupModel;       ///< the model of the fused group open in the editor
  QString m_shownModel;       ///< the model the graph, runs and profiles are of
  bool m_asmDirectives = true, m_asmUnusedLabels = true, m_asmComments = true;
  QVector<int> m_asmShown;    ///< Assembly pane line - 1 -> index into the compile's asmLines
  int m_pendingCluster = -1;  ///< opened before the model's kernels were extracted
  /// A group opened, or a profile started, on a model without concrete input shapes: done once
  /// the shapes are entered and the model (`m_afterShapesModel`) reloads with them.
  int m_clusterAfterShapes = -1;
  bool m_profileAfterShapes = false;
  QString m_afterShapesModel;
  QString m_groupDetails;     ///< the preset bar's text for the open fused group
  /// The editor texts an opened fused group starts from: for CPU targets (header + the default
  /// schedule's script) and for GPU targets (header only: an empty script gets the default GPU
  /// schedule). Switching between CPU and GPU swaps one for the other while the text is untouched.
  QString m_groupCpuText, m_groupGpuText;
};

}  // namespace loom::views
