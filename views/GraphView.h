// The model graph view: a laid-out graph in a QGraphicsScene with zoom, pan, fit, search and minimap.
#pragma once
#include <QGraphicsView>
#include <QHash>
#include <QSet>

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
  ~GraphView() override;

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

  /// Collapses fused cluster `cluster` to one node (or expands it) in the fused view. The new
  /// layout is made by Graphviz off the UI thread and cached per set of collapsed clusters; the
  /// view changes when it is ready (layoutReady).
  void setCollapsed(int cluster, bool collapsed);
  /// Collapses (or expands) every cluster.
  void setAllCollapsed(bool collapsed);
  /// Collapses exactly `clusters` (one layout for the whole change).
  void setCollapsedClusters(const QSet<int>& clusters);
  /// Zooms in to at least 80% (if further out) and centres on cluster `c`.
  void focusCluster(int c);
  QSet<int> collapsedClusters() const { return m_collapsed; }
  /// True while the layout of the requested collapse state is being made.
  bool isLayoutPending() const { return !m_pendingKey.isEmpty(); }
  /// Layouts made for collapse states so far (the all-expanded one not counted).
  int cachedLayoutCount() const { return int(m_layouts.size()); }
  /// The fused cluster under scene point `p` (a node in it, its collapsed node, or its frame), or -1.
  int clusterAt(const QPointF& scenePos) const;
  /// Scene centre of cluster `c` on screen: its frame, or its node when collapsed (null if absent).
  QPointF clusterCenter(int c) const;
  /// The cost shown on each cluster's collapsed node ("12.5 MFLOP"), by cluster; re-lays out
  /// the collapsed view when some clusters are collapsed.
  void setClusterCosts(const QVector<QString>& costs);
  /// The profile overlay: each cluster's time (ms, by cluster of the fused view) of a model run
  /// whose nodes took `totalMs` together. Clusters and their nodes take a heat colour by their
  /// share of the time (relative to the hottest), their time is written on them and a legend shows
  /// the scale. An empty vector removes the overlay.
  void setHeat(const QVector<double>& clusterMs, double totalMs);
  bool hasHeat() const { return !m_heatMs.isEmpty(); }
  /// The heat colour of cluster `c` under the overlay (invalid without one).
  QColor clusterHeatColor(int c) const;
  /// The heat scale: t = 0 (no time) .. 1 (the hottest cluster), light yellow to dark red.
  static QColor heatColor(double t);
  /// The overlay's legend (hidden without an overlay).
  QWidget* heatLegend() const { return m_legend; }
  /// The minimap (shown for graphs of more than 24 nodes).
  QGraphicsView* minimap() const { return m_minimap; }
  /// The search box (finds as you type; Enter steps to the next match).
  QLineEdit* searchBox() const { return m_search; }
  /// Marks the clusters whose kernel is open in the schedule editor (a thick frame / border).
  void setHighlightedClusters(const QSet<int>& clusters);
  QSet<int> highlightedClusters() const { return m_highlighted; }
  /// Pops up the context menu of scene point `p` at global position `global`; the menu is
  /// returned for tests (it deletes itself when closed).
  class QMenu* showContextMenu(const QPointF& scenePos, const QPoint& global);

signals:
  void nodeSelected(const loom::views::GraphNode& node);
  void selectionCleared();
  void modeChanged(int mode);
  /// A fused cluster was double-clicked (or "Open in schedule editor" chosen).
  void groupActivated(int cluster);
  /// The layout of the current collapse state is on screen.
  void layoutReady();

private:
  void rebuild();
  /// Shows the current collapse state: cached, or laid out on a worker first. Then centres on
  /// `focusCluster` (>= 0), fits the graph (-1), or keeps the view (-2).
  void applyCollapse(int focusCluster);
  /// The fused graph of the current collapse state (the plain fused graph when nothing is collapsed).
  const GraphData& fusedGraph() const;

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
  QSet<int> m_collapsed;
  QSet<int> m_highlighted;
  QVector<QString> m_costs;
  QVector<double> m_heatMs;
  double m_heatTotal = 0;
  QWidget* m_legend = nullptr;
  void placeOverlays();
  QHash<QString, GraphData> m_layouts;  ///< collapse state ("1,4,7") -> laid-out graph
  QString m_shownKey;                   ///< the collapse state on screen
  QString m_pendingKey;                 ///< the collapse state being laid out
  quint64 m_layoutGen = 0;
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
  void doubleClicked(const QPointF& scenePos);
  void contextMenuAt(const QPointF& scenePos, const QPoint& global);

protected:
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void scrollContentsBy(int dx, int dy) override;
  void resizeEvent(QResizeEvent* e) override;
};

}  // namespace loom::views
