// The model graph view: a laid-out graph in a QGraphicsScene with zoom, pan, fit, search and minimap.
#pragma once
#include <QGraphicsView>

#include "views/StudioTypes.h"

class QLineEdit;
class QComboBox;
class QLabel;

namespace loom::views {

class GraphCanvas;

/// The canvas plus its tool bar (imported / optimized / fused, search, fit, zoom).
class GraphView : public QWidget {
  Q_OBJECT
public:
  enum Mode { Imported, Optimized, Fused };
  explicit GraphView(QWidget* parent = nullptr);

  /// Shows `model` in the current mode.
  void setModel(const ModelData& model);
  void clear();
  void setMode(Mode mode);
  Mode mode() const { return m_mode; }
  /// The graph on screen.
  const GraphData& graph() const { return m_graph; }
  /// Node, edge and cluster items in the scene.
  int nodeItemCount() const;
  int clusterItemCount() const;
  int edgeItemCount() const;
  /// Selects the next node whose op or name contains `text` (case-insensitive) and centres on it;
  /// returns the number of matching nodes.
  int findNext(const QString& text);
  /// The selected node's index in graph().nodes, or -1.
  int selectedNode() const { return m_selected; }
  void selectNode(int index);
  void fitAll();
  GraphCanvas* canvas() const { return m_canvas; }
  void setDark(bool dark);

signals:
  void nodeSelected(const loom::views::GraphNode& node);
  void selectionCleared();
  void modeChanged(int mode);

private:
  void rebuild();

  GraphCanvas* m_canvas = nullptr;
  QGraphicsView* m_minimap = nullptr;
  QComboBox* m_modeBox = nullptr;
  QLineEdit* m_search = nullptr;
  QLabel* m_info = nullptr;
  Mode m_mode = Fused;
  ModelData m_model;
  bool m_hasModel = false;
  GraphData m_graph;
  int m_selected = -1;
  int m_searchPos = -1;
  QString m_lastSearch;
  bool m_dark = false;
  bool m_autoFit = true;  ///< refit on resize until the user zooms
};

/// The zoomable, pannable scene view; draws the minimap's visible-area frame.
class GraphCanvas : public QGraphicsView {
  Q_OBJECT
public:
  explicit GraphCanvas(QWidget* parent = nullptr);
  void zoomBy(double factor);

signals:
  void viewportChanged();
  void resized();
  void userZoomed();

protected:
  void wheelEvent(QWheelEvent* e) override;
  void scrollContentsBy(int dx, int dy) override;
  void resizeEvent(QResizeEvent* e) override;
};

}  // namespace loom::views
