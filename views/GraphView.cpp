// The model graph view: node, edge and cluster items, search, fit, zoom and a minimap.
#include "views/GraphView.h"

#include <QComboBox>
#include <algorithm>
#include <QContextMenuEvent>
#include <QMenu>
#include <QPointer>
#include <QThreadPool>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QStyleOptionGraphicsItem>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>

#include "views/Background.h"
#include "views/CodePane.h"
#include "views/GraphLayout.h"
#include "views/ModelJobs.h"

namespace loom::views {

namespace {

constexpr int kIndexKey = 0;  // QGraphicsItem::data key of a node item's index
constexpr int kTypeKey = 1;   // "node", "edge", "cluster"

QColor nodeColor(const GraphNode& n, bool dark) {
  QString op = n.op;
  QColor c;
  if (n.kind == "group") return CodePane::linkColor(n.group, dark);
  if (n.kind == "input" || n.kind == "output") c = QColor(0xd9, 0xe8, 0xd0);
  else if (n.kind == "tuple") c = QColor(0xe6, 0xe6, 0xe6);
  else if (op.contains("conv") || op.contains("dense") || op.contains("matmul")) c = QColor(0xc9, 0xdc, 0xf2);
  else if (op.contains("pool") || op.contains("reduce") || op.startsWith("sum") || op.startsWith("mean") || op.contains("softmax"))
    c = QColor(0xd9, 0xd0, 0xf0);
  else if (op.contains("reshape") || op.contains("transpose") || op.contains("concat") || op.contains("split") ||
           op.contains("layout") || op.contains("squeeze") || op.contains("flatten") || op.contains("slice"))
    c = QColor(0xf0, 0xe2, 0xc8);
  else c = QColor(0xf6, 0xd5, 0xd0);
  return dark ? c.darker(260) : c;
}

/// One op / input / output box: op on the first line, output type below.
class NodeItem : public QGraphicsItem {
public:
  NodeItem(const GraphNode& n, int index, bool dark, bool highlighted = false, QColor heat = {}, QString note = {})
      : m_node(n), m_dark(dark), m_highlighted(highlighted), m_heat(heat), m_note(note) {
    setPos(n.box.topLeft());
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(true);
    setData(kIndexKey, index);
    setData(kTypeKey, "node");
    setZValue(2);
    setToolTip(QString("<b>%1</b><br>%2<br><tt>%3</tt>%4").arg(n.op.toHtmlEscaped(), n.name.toHtmlEscaped(), n.shape.toHtmlEscaped(),
                                                               note.isEmpty() ? QString() : "<br>" + note.toHtmlEscaped()));
    if (m_heat.isValid() && !m_note.isEmpty() && n.kind == "group") {
      // Time first; the output type (the longest part) moves to the tooltip so the line fits the box.
      QStringList parts = m_node.shape.split(" · ");
      if (parts.size() > 1) parts.removeLast();
      m_node.shape = m_note + " · " + parts.join(" · ");
    }
  }
  QColor fill() const { return m_heat.isValid() ? m_heat : nodeColor(m_node, m_dark); }
  QRectF boundingRect() const override { return QRectF(QPointF(0, 0), m_node.box.size()).adjusted(-2, -2, 2, 2); }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override {
    QRectF r(QPointF(0, 0), m_node.box.size());
    // Far out (the minimap, a fitted large graph) text is unreadable: a plain box is enough and
    // keeps painting a 1000-node graph cheap.
    if (option->levelOfDetailFromTransform(p->worldTransform()) < 0.3) {
      p->fillRect(r, isSelected() ? QColor(0xff, 0x80, 0x00) : fill());
      return;
    }
    p->setRenderHint(QPainter::Antialiasing);
    QColor border = isSelected() ? QColor(0xff, 0x80, 0x00) : (m_dark ? QColor(0x90, 0x90, 0x90) : QColor(0x50, 0x50, 0x50));
    p->setPen(QPen(border, isSelected() ? 2.5 : 1));
    p->setBrush(fill());
    bool boxed = m_node.kind == "op" || m_node.kind == "group";
    double radius = boxed ? 4 : r.height() / 2;
    if (m_node.kind == "group") p->setPen(QPen(m_highlighted ? QColor(0xff, 0x60, 0x00) : border, isSelected() || m_highlighted ? 3 : 2));
    p->drawRoundedRect(r, radius, radius);
    QFont f("DejaVu Sans Mono");
    f.setPixelSize(11);
    f.setBold(true);
    p->setFont(f);
    bool darkFill = fill().lightnessF() < 0.45;
    p->setPen(m_dark || darkFill ? QColor(0xee, 0xee, 0xee) : QColor(0x10, 0x10, 0x10));
    if (m_node.shape.isEmpty() || !boxed) {
      QString label = m_node.kind == "input" ? m_node.name : m_node.op;
      p->drawText(r, Qt::AlignCenter, label);
      return;
    }
    p->drawText(QRectF(r.left(), r.top() + 3, r.width(), r.height() / 2 - 2), Qt::AlignHCenter | Qt::AlignVCenter, m_node.op);
    f.setBold(false);
    f.setPixelSize(10);
    p->setFont(f);
    p->setPen(m_dark || darkFill ? QColor(0xd0, 0xd0, 0xd0) : QColor(0x40, 0x40, 0x40));
    p->drawText(QRectF(r.left(), r.center().y(), r.width(), r.height() / 2 - 3), Qt::AlignHCenter | Qt::AlignVCenter,
                m_node.shape);
  }

private:
  GraphNode m_node;
  bool m_dark;
  bool m_highlighted;
  QColor m_heat;
  QString m_note;
};

/// The heat overlay's legend: the scale from no time to the hottest cluster's share.
class HeatLegend : public QWidget {
public:
  explicit HeatLegend(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setFixedSize(190, 44);
  }
  void setRange(double maxShare, double totalMs) {
    m_max = maxShare;
    m_total = totalMs;
    update();
  }

protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.setBrush(QColor(255, 255, 255, 225));
    p.setPen(QColor(0x90, 0x90, 0x90));
    p.drawRoundedRect(rect().adjusted(0, 0, -1, -1), 4, 4);
    QFont f = font();
    f.setPixelSize(10);
    p.setFont(f);
    p.setPen(QColor(0x20, 0x20, 0x20));
    p.drawText(QRect(6, 2, width() - 12, 14), Qt::AlignLeft | Qt::AlignVCenter, QString("share of %1 ms").arg(m_total, 0, 'f', 3));
    QRect bar(6, 17, width() - 12, 10);
    for (int x = 0; x < bar.width(); ++x) {
      p.setPen(GraphView::heatColor(double(x) / std::max(1, bar.width() - 1)));
      p.drawLine(bar.left() + x, bar.top(), bar.left() + x, bar.bottom());
    }
    p.setPen(QColor(0x20, 0x20, 0x20));
    p.drawText(QRect(6, 28, width() - 12, 14), Qt::AlignLeft | Qt::AlignVCenter, "0%");
    p.drawText(QRect(6, 28, width() - 12, 14), Qt::AlignRight | Qt::AlignVCenter, QString("%1%").arg(100 * m_max, 0, 'f', 1));
  }

private:
  double m_max = 0, m_total = 0;
};

QPainterPath splinePath(const QVector<QPointF>& pts) {
  QPainterPath path;
  if (pts.isEmpty()) return path;
  path.moveTo(pts[0]);
  int i = 1;
  for (; i + 2 < pts.size(); i += 3) path.cubicTo(pts[i], pts[i + 1], pts[i + 2]);
  for (; i < pts.size(); ++i) path.lineTo(pts[i]);
  return path;
}

/// The minimap: the whole scene, scaled to fit, with the main view's visible area framed.
class MiniMap : public QGraphicsView {
public:
  MiniMap(GraphCanvas* main, QWidget* parent) : QGraphicsView(parent), m_main(main) {
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setInteractive(false);
    setFrameShape(QFrame::Box);
    setRenderHint(QPainter::Antialiasing, false);
    setToolTip("Minimap: click to move the view");
  }
  void refit() {
    if (scene()) fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    viewport()->update();
  }

protected:
  void drawForeground(QPainter* p, const QRectF&) override {
    QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
    p->setPen(QPen(QColor(0xff, 0x60, 0x00), 0));
    p->setBrush(QColor(0xff, 0x80, 0x00, 40));
    p->drawRect(visible);
  }
  void mousePressEvent(QMouseEvent* e) override { m_main->centerOn(mapToScene(e->pos())); }
  void mouseMoveEvent(QMouseEvent* e) override {
    if (e->buttons() & Qt::LeftButton) m_main->centerOn(mapToScene(e->pos()));
  }
  void resizeEvent(QResizeEvent* e) override {
    QGraphicsView::resizeEvent(e);
    refit();
  }

private:
  GraphCanvas* m_main;
};

}  // namespace

GraphCanvas::GraphCanvas(QWidget* parent) : QGraphicsView(parent) {
  setDragMode(ScrollHandDrag);
  setRenderHint(QPainter::Antialiasing);
  setTransformationAnchor(AnchorUnderMouse);
  setViewportUpdateMode(SmartViewportUpdate);
}

void GraphCanvas::zoomBy(double factor) {
  double current = transform().m11();
  double next = std::clamp(current * factor, 0.02, 8.0);
  scale(next / current, next / current);
  emit viewportChanged();
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent* e) {
  emit doubleClicked(mapToScene(e->pos()));
  e->accept();
}

void GraphCanvas::contextMenuEvent(QContextMenuEvent* e) {
  emit contextMenuAt(mapToScene(e->pos()), e->globalPos());
  e->accept();
}

void GraphCanvas::wheelEvent(QWheelEvent* e) {
  emit userZoomed();
  zoomBy(e->angleDelta().y() > 0 ? 1.15 : 1 / 1.15);
  e->accept();
}

void GraphCanvas::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  emit viewportChanged();
}

void GraphCanvas::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  emit viewportChanged();
  emit resized();
}

// The scene's items go when ~QWidget deletes the canvas, after this object's members: clearing
// a selection then emits selectionChanged into a lambda that reads them (UBSan: member access
// within a QWidget that is no longer a GraphView). Disconnected first.
GraphView::~GraphView() { disconnect(m_canvas->scene(), nullptr, this, nullptr); }

GraphView::GraphView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 2, 4, 0);
  m_modeBox = new QComboBox;
  m_modeBox->addItems({"Imported", "Optimized", "Fused"});
  m_modeBox->setCurrentIndex(int(m_mode));
  m_modeBox->setToolTip("Which graph to show: as imported, after graph optimizations, or fused into kernels");
  m_search = new QLineEdit;
  m_search->setPlaceholderText("Find node by name or op (finds as you type; Enter: next)");
  m_search->setClearButtonEnabled(true);
  auto button = [&](const QString& text, const QString& tip) {
    auto* b = new QToolButton;
    b->setText(text);
    b->setToolTip(tip);
    bar->addWidget(b);
    return b;
  };
  bar->addWidget(m_modeBox);
  bar->addWidget(m_search, 1);
  QToolButton* fit = button("Fit", "Fit the graph in the view");
  QToolButton* zin = button("+", "Zoom in");
  QToolButton* zout = button("−", "Zoom out");
  layout->addLayout(bar);
  m_canvas = new GraphCanvas;
  m_canvas->setScene(new QGraphicsScene(m_canvas));
  layout->addWidget(m_canvas, 1);
  m_info = new QLabel;
  m_info->setContentsMargins(4, 0, 4, 2);
  m_info->setWordWrap(true);  // a long line (symbolic dims, layout errors) wraps instead of widening the dock
  layout->addWidget(m_info);
  m_minimap = new MiniMap(m_canvas, m_canvas);
  m_minimap->setScene(m_canvas->scene());
  m_minimap->resize(110, 140);
  m_minimap->hide();
  m_legend = new HeatLegend(m_canvas);
  m_legend->hide();

  connect(m_modeBox, &QComboBox::currentIndexChanged, this, [this](int i) { setMode(Mode(i)); });
  connect(m_search, &QLineEdit::returnPressed, this, [this] { findNext(m_search->text()); });
  connect(m_search, &QLineEdit::textEdited, this, [this](const QString& text) {
    if (text.isEmpty()) {
      m_canvas->scene()->clearSelection();
      rebuild();  // the info line back
      return;
    }
    m_searchPos = -1;
    findNext(text);  // live: the first match, zoomed to
  });
  connect(fit, &QToolButton::clicked, this, &GraphView::fitAll);
  connect(zin, &QToolButton::clicked, this, [this] { m_canvas->zoomBy(1.25); m_autoFit = false; });
  connect(zout, &QToolButton::clicked, this, [this] { m_canvas->zoomBy(0.8); m_autoFit = false; });
  connect(m_canvas, &GraphCanvas::userZoomed, this, [this] { m_autoFit = false; });
  connect(m_canvas, &GraphCanvas::resized, this, [this] {
    if (m_autoFit) fitAll();
  });
  connect(m_canvas, &GraphCanvas::viewportChanged, this, [this] {
    placeOverlays();
    m_minimap->viewport()->update();
  });
  connect(m_canvas, &GraphCanvas::doubleClicked, this, [this](const QPointF& p) {
    int c = clusterAt(p);
    if (c >= 0) emit groupActivated(c);
  });
  connect(m_canvas, &GraphCanvas::contextMenuAt, this, [this](const QPointF& p, const QPoint& global) { showContextMenu(p, global); });
  connect(m_canvas->scene(), &QGraphicsScene::selectionChanged, this, [this] {
    QList<QGraphicsItem*> sel = m_canvas->scene()->selectedItems();
    if (sel.isEmpty()) {
      m_selected = -1;
      emit selectionCleared();
      return;
    }
    int index = sel.first()->data(kIndexKey).toInt();
    if (index < 0 || index >= m_graph.nodes.size()) return;
    m_selected = index;
    emit nodeSelected(m_graph.nodes[index]);
  });
}

void GraphView::setModel(const ModelData& model) {
  m_model = model;
  m_hasModel = true;
  m_collapsed.clear();
  m_layouts.clear();
  m_shownKey.clear();
  m_pendingKey.clear();
  ++m_layoutGen;
  m_autoFit = true;
  rebuild();
  fitAll();
}

void GraphView::clear() {
  m_hasModel = false;
  m_model = ModelData();
  m_collapsed.clear();
  m_layouts.clear();
  m_shownKey.clear();
  m_pendingKey.clear();
  ++m_layoutGen;
  rebuild();
}

void GraphView::setMode(Mode mode) {
  if (m_modeBox->currentIndex() != int(mode)) m_modeBox->setCurrentIndex(int(mode));  // re-enters
  if (mode == m_mode) return;
  m_mode = mode;
  rebuild();
  fitAll();
  emit modeChanged(int(mode));
}

void GraphView::setDark(bool dark) {
  m_dark = dark;
  m_canvas->setBackgroundBrush(dark ? QColor(0x1e, 0x1f, 0x22) : QColor(0xfb, 0xfb, 0xfb));
  m_minimap->setBackgroundBrush(dark ? QColor(0x2a, 0x2b, 0x2e) : QColor(0xee, 0xee, 0xee));
  QTransform t = m_canvas->transform();
  QPointF centre = m_canvas->mapToScene(m_canvas->viewport()->rect().center());
  rebuild();
  m_canvas->setTransform(t);
  m_canvas->centerOn(centre);
}

void GraphView::rebuild() {
  QGraphicsScene* scene = m_canvas->scene();
  scene->clear();
  m_selected = -1;
  m_searchPos = -1;
  m_graph = !m_hasModel ? GraphData() : m_mode == Imported ? m_model.imported : m_mode == Optimized ? m_model.optimized : fusedGraph();
  QColor edgeColor = m_dark ? QColor(0xa0, 0xa0, 0xa0) : QColor(0x60, 0x60, 0x60);
  QFont small("DejaVu Sans Mono");
  small.setPixelSize(9);
  QFontMetricsF smallMetrics(small);
  QVector<QRectF> taken;  // cluster titles: edge labels keep out of them
  for (int c = 0; c < m_graph.clusters.size(); ++c) {
    const GraphCluster& cl = m_graph.clusters[c];
    if (cl.box.isNull()) continue;  // collapsed: drawn as one node
    QColor fill = CodePane::linkColor(c, m_dark);
    fill.setAlpha(m_dark ? 170 : 150);
    QString title = cl.name;
    if (!m_heatMs.isEmpty()) {
      fill = clusterHeatColor(c);
      fill.setAlpha(110);
      double ms = m_heatMs.value(c);
      title += QString("  %1 ms · %2%").arg(ms, 0, 'f', 3).arg(m_heatTotal > 0 ? 100 * ms / m_heatTotal : 0, 0, 'f', 1);
    }
    bool open = m_highlighted.contains(c);
    auto* item = scene->addRect(cl.box, open ? QPen(QColor(0xff, 0x60, 0x00), 3) : QPen(fill.darker(150), 1), fill);
    item->setZValue(0);
    item->setData(kTypeKey, "cluster");
    item->setData(kIndexKey, c);
    item->setToolTip(cl.name + "\ndouble-click: open in the schedule editor; right-click: collapse");
    auto* label = scene->addSimpleText(title, small);
    label->setBrush(m_dark ? QColor(0xdd, 0xdd, 0xdd) : QColor(0x30, 0x30, 0x30));
    label->setPos(cl.box.left() + 4, cl.box.top() + 2);
    label->setZValue(1);
    taken << label->sceneBoundingRect().adjusted(-2, -2, 2, 2);
  }
  for (const GraphEdge& e : m_graph.edges) {
    if (e.spline.isEmpty()) continue;
    QPainterPath path = splinePath(e.spline);
    auto* item = scene->addPath(path, QPen(edgeColor, 1.1));
    item->setZValue(1);
    item->setData(kTypeKey, "edge");
    item->setToolTip(e.label);
    // Arrow head at the end.
    QPointF tip = e.spline.back(), from = e.spline.size() > 1 ? e.spline[e.spline.size() - 2] : tip;
    QLineF dir(tip, from);
    if (dir.length() > 0.1) {
      dir.setLength(7);
      QLineF a = dir, b = dir;
      a.setAngle(dir.angle() + 22);
      b.setAngle(dir.angle() - 22);
      auto* head = scene->addPolygon(QPolygonF({tip, a.p2(), b.p2()}), QPen(edgeColor), edgeColor);
      head->setZValue(1);
    }
    // The value's shape beside the edge's middle, when there is room.
    if (!e.label.isEmpty() && m_graph.nodes.size() <= 400) {
      QSizeF size = smallMetrics.size(0, e.label);
      for (double at : {0.5, 0.3, 0.7}) {
        QRectF rect(path.pointAtPercent(at) + QPointF(4, -size.height() / 2), size);
        bool clear = std::none_of(taken.begin(), taken.end(), [&](const QRectF& r) { return r.intersects(rect); });
        for (const GraphNode& n : m_graph.nodes) clear = clear && !n.box.intersects(rect);
        if (!clear) continue;
        auto* t = scene->addSimpleText(e.label, small);
        t->setBrush(m_dark ? QColor(0x90, 0x90, 0x90) : QColor(0x70, 0x70, 0x70));
        t->setPos(rect.topLeft());
        t->setZValue(1);
        taken << rect;
        break;
      }
    }
  }
  for (int i = 0; i < m_graph.nodes.size(); ++i) {
    const GraphNode& n = m_graph.nodes[i];
    int c = n.kind == "group" ? n.group : n.cluster;
    QColor heat;
    QString note;
    if (!m_heatMs.isEmpty() && m_mode == Fused && c >= 0) {
      heat = clusterHeatColor(c);
      double ms = m_heatMs.value(c);
      note = QString("%1 ms · %2% of the model's time").arg(ms, 0, 'f', 3).arg(m_heatTotal > 0 ? 100 * ms / m_heatTotal : 0, 0, 'f', 1);
      if (n.kind == "group") note = QString("%1 ms, %2%").arg(ms, 0, 'f', 2).arg(m_heatTotal > 0 ? 100 * ms / m_heatTotal : 0, 0, 'f', 1);
    }
    scene->addItem(new NodeItem(n, i, m_dark, n.kind == "group" && m_highlighted.contains(n.group), heat, note));
  }
  m_legend->setVisible(!m_heatMs.isEmpty() && m_mode == Fused);
  scene->setSceneRect(m_graph.bounds.adjusted(-20, -20, 20, 20));
  m_minimap->setVisible(m_graph.nodes.size() > 24);
  static_cast<MiniMap*>(m_minimap)->refit();
  placeOverlays();
  QString info;
  if (m_hasModel) {
    int ops = 0;  // collapsing hides ops, it does not remove them
    for (const GraphNode& n : (m_mode == Fused ? m_model.fused : m_graph).nodes) ops += n.kind == "op";
    info = QString("%1 ops%2 · %3 edges").arg(ops).arg(m_mode == Imported ? QString(" as imported") : m_mode == Optimized ? QString(" after optimization")
                                                                                                     : QString(" after fusion"))
               .arg(m_graph.edges.size());
    if (!m_graph.clusters.isEmpty()) info += QString(" · %1 fused groups").arg(m_graph.clusters.size());
    if (m_mode == Fused && !m_shownKey.isEmpty()) info += QString(" · %1 collapsed").arg(m_shownKey.count(',') + 1);
    if (!m_graph.layoutError.isEmpty()) info += " · layout failed: " + m_graph.layoutError;
    // A model with symbolic dims: the types stay symbolic, the kernels are at concrete shapes.
    if (m_model.hasSymbolicInputs())
      info += m_model.concrete() ? " · kernels at " + inputShapesSpec(m_model.inputs)
                                 : QString(" · symbolic dims without values: Model > Input Shapes…");
  }
  m_info->setText(info);
}

void GraphView::placeOverlays() {
  // The minimap sits in the corner of the view, kept narrow (a third of the width at most) and
  // shaped like the graph, so it covers little of it; the legend sits top left.
  QSize vp = m_canvas->viewport()->size();
  QRectF scene = m_canvas->scene()->sceneRect();
  int w = std::clamp(vp.width() / 5, 60, 140), h = std::clamp(vp.height() / 4, 60, 180);
  if (scene.width() > 0 && scene.height() > 0) {
    double aspect = scene.width() / scene.height();
    if (aspect < double(w) / h) w = std::max(40, int(h * aspect));
    else h = std::max(40, int(w / aspect));
  }
  if (m_minimap->size() != QSize(w, h)) m_minimap->resize(w, h);
  m_minimap->move(vp.width() - w - 6, vp.height() - h - 6);
  m_legend->move(6, 6);
}

QColor GraphView::heatColor(double t) {
  // Light yellow -> orange -> dark red (ColorBrewer YlOrRd's ends and middle).
  static const QColor stops[] = {QColor(0xff, 0xff, 0xcc), QColor(0xfe, 0xd9, 0x76), QColor(0xfd, 0x8d, 0x3c),
                                 QColor(0xe3, 0x1a, 0x1c), QColor(0x80, 0x00, 0x26)};
  t = std::clamp(t, 0.0, 1.0) * 4;
  int i = std::min(3, int(t));
  double f = t - i;
  const QColor &a = stops[i], &b = stops[i + 1];
  return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * f), float(a.greenF() + (b.greenF() - a.greenF()) * f),
                          float(a.blueF() + (b.blueF() - a.blueF()) * f));
}

QColor GraphView::clusterHeatColor(int c) const {
  if (m_heatMs.isEmpty() || c < 0 || c >= m_heatMs.size()) return {};
  double hottest = *std::max_element(m_heatMs.begin(), m_heatMs.end());
  return heatColor(hottest > 0 ? m_heatMs[c] / hottest : 0);
}

void GraphView::setHeat(const QVector<double>& clusterMs, double totalMs) {
  m_heatMs = clusterMs;
  m_heatTotal = totalMs;
  double hottest = clusterMs.isEmpty() ? 0 : *std::max_element(clusterMs.begin(), clusterMs.end());
  static_cast<HeatLegend*>(m_legend)->setRange(totalMs > 0 ? hottest / totalMs : 0, totalMs);
  if (!m_hasModel) return;
  QTransform t = m_canvas->transform();
  QPointF centre = m_canvas->mapToScene(m_canvas->viewport()->rect().center());
  rebuild();
  m_canvas->setTransform(t);
  m_canvas->centerOn(centre);
}

int GraphView::nodeItemCount() const {
  int n = 0;
  for (QGraphicsItem* it : m_canvas->scene()->items()) n += it->data(kTypeKey).toString() == "node";
  return n;
}

int GraphView::clusterItemCount() const {
  int n = 0;
  for (QGraphicsItem* it : m_canvas->scene()->items()) n += it->data(kTypeKey).toString() == "cluster";
  return n;
}

int GraphView::edgeItemCount() const {
  int n = 0;
  for (QGraphicsItem* it : m_canvas->scene()->items()) n += it->data(kTypeKey).toString() == "edge";
  return n;
}

int GraphView::findNext(const QString& text) {
  if (text.isEmpty()) return 0;
  QVector<int> matches;
  for (int i = 0; i < m_graph.nodes.size(); ++i)
    if (m_graph.nodes[i].op.contains(text, Qt::CaseInsensitive) || m_graph.nodes[i].name.contains(text, Qt::CaseInsensitive))
      matches << i;
  if (text != m_lastSearch) m_searchPos = -1;
  m_lastSearch = text;
  if (matches.isEmpty()) {
    m_info->setText(QString("no node matches '%1'").arg(text));
    return 0;
  }
  int next = matches[0];
  for (int i : matches)
    if (i > m_searchPos) {
      next = i;
      break;
    }
  m_searchPos = next;
  selectNode(next);
  m_info->setText(QString("match %1 of %2: %3 %4").arg(matches.indexOf(next) + 1).arg(matches.size()).arg(m_graph.nodes[next].op, m_graph.nodes[next].name));
  return int(matches.size());
}

void GraphView::selectNode(int index) {
  m_canvas->scene()->clearSelection();
  for (QGraphicsItem* it : m_canvas->scene()->items())
    if (it->data(kTypeKey).toString() == "node" && it->data(kIndexKey).toInt() == index) {
      it->setSelected(true);
      // Zoom in to a readable scale (at least 80%) when the graph is shown smaller.
      if (m_canvas->transform().m11() < 0.8) {
        m_canvas->resetTransform();
        m_canvas->scale(0.8, 0.8);
        m_autoFit = false;
      }
      m_canvas->centerOn(it);
      emit m_canvas->viewportChanged();
      break;
    }
}

void GraphView::fitAll() {
  if (!m_hasModel || m_graph.nodes.isEmpty()) return;
  // Fit the whole graph when that keeps it readable; else fit its width (never magnifying
  // beyond 1:1, never below 40%) and start at the top, as tall model graphs are read.
  QRectF scene = m_canvas->scene()->sceneRect();
  QRectF view = m_canvas->viewport()->rect();
  double whole = std::min(view.width() / scene.width(), view.height() / scene.height());
  double byWidth = view.width() / scene.width();
  double s = whole >= 0.6 ? std::min(whole, 1.0) : std::clamp(byWidth, 0.4, 1.0);
  m_canvas->resetTransform();
  m_canvas->scale(s, s);
  if (whole >= 0.6) m_canvas->centerOn(scene.center());
  else m_canvas->centerOn(QPointF(scene.center().x(), scene.top() + view.height() / (2 * s)));
  emit m_canvas->viewportChanged();
}

}  // namespace loom::views

namespace loom::views {

namespace {
QString collapseKey(const QSet<int>& set) {
  QList<int> v(set.begin(), set.end());
  std::sort(v.begin(), v.end());
  QStringList parts;
  for (int c : v) parts << QString::number(c);
  return parts.join(',');
}
}  // namespace

const GraphData& GraphView::fusedGraph() const {
  auto it = m_layouts.find(m_shownKey);
  return m_shownKey.isEmpty() || it == m_layouts.end() ? m_model.fused : *it;
}

void GraphView::setCollapsed(int cluster, bool collapsed) {
  if (!m_hasModel || cluster < 0 || cluster >= m_model.fused.clusters.size()) return;
  if (collapsed == m_collapsed.contains(cluster) && m_pendingKey.isEmpty()) return;
  if (collapsed) m_collapsed.insert(cluster);
  else m_collapsed.remove(cluster);
  applyCollapse(cluster);
}

void GraphView::setAllCollapsed(bool collapsed) {
  if (!m_hasModel) return;
  m_collapsed.clear();
  if (collapsed)
    for (int c = 0; c < m_model.fused.clusters.size(); ++c) m_collapsed.insert(c);
  applyCollapse(-1);
}

void GraphView::setCollapsedClusters(const QSet<int>& clusters) {
  if (!m_hasModel) return;
  m_collapsed.clear();
  for (int c : clusters)
    if (c >= 0 && c < m_model.fused.clusters.size()) m_collapsed.insert(c);
  applyCollapse(-2);
}

void GraphView::focusCluster(int c) {
  QPointF at = clusterCenter(c);
  if (at.isNull()) return;
  if (m_canvas->transform().m11() < 0.8) {
    m_canvas->resetTransform();
    m_canvas->scale(0.8, 0.8);
  }
  m_autoFit = false;
  m_canvas->centerOn(at);
  emit m_canvas->viewportChanged();
}

void GraphView::applyCollapse(int focusCluster) {
  QString key = collapseKey(m_collapsed);
  quint64 gen = ++m_layoutGen;
  auto show = [this, key, focusCluster] {
    m_pendingKey.clear();
    m_shownKey = key;
    if (m_mode == Fused) {
      QTransform t = m_canvas->transform();
      QPointF centre = m_canvas->mapToScene(m_canvas->viewport()->rect().center());
      rebuild();
      if (!m_autoFit && !m_highlighted.isEmpty()) {  // keep the group being edited in view
        m_canvas->setTransform(t);
        QPointF c = clusterCenter(*std::min_element(m_highlighted.begin(), m_highlighted.end()));
        m_canvas->centerOn(c.isNull() ? centre : c);
        emit m_canvas->viewportChanged();
      } else if (focusCluster == -2 && !m_autoFit) {
        m_canvas->setTransform(t);
        m_canvas->centerOn(centre);
        emit m_canvas->viewportChanged();
      } else if (focusCluster >= 0 && !m_autoFit) {
        m_canvas->setTransform(t);
        QPointF c = clusterCenter(focusCluster);
        if (!c.isNull()) m_canvas->centerOn(c);
        emit m_canvas->viewportChanged();
      } else {
        fitAll();
      }
    }
    emit layoutReady();
  };
  if (key.isEmpty() || m_layouts.contains(key)) {
    show();
    return;
  }
  m_pendingKey = key;
  m_info->setText(QString("laying out %1 collapsed group(s)…").arg(m_collapsed.size()));
  GraphData graph = collapseClusters(m_model.fused, m_collapsed, m_costs);
  QPointer<GraphView> self(this);
  startJob(*QThreadPool::globalInstance(), [self, graph, key, gen, show]() mutable {
    yieldToUiThread();
    layoutGraph(graph);  // Graphviz, off the UI thread
    if (!self) return;
    postToGui(self, [self, graph, key, gen, show] {
      if (!self) return;
      if (self->m_layouts.size() >= 64) self->m_layouts.clear();  // bound the cache
      self->m_layouts.insert(key, graph);
      if (gen == self->m_layoutGen) show();
    });
  });
}

void GraphView::setClusterCosts(const QVector<QString>& costs) {
  if (costs == m_costs) return;
  m_costs = costs;
  m_layouts.clear();
  if (!m_collapsed.isEmpty()) applyCollapse(-2);
}

void GraphView::setHighlightedClusters(const QSet<int>& clusters) {
  if (clusters == m_highlighted) return;
  m_highlighted = clusters;
  if (m_mode != Fused || !m_hasModel) return;
  QTransform t = m_canvas->transform();
  QPointF centre = m_canvas->mapToScene(m_canvas->viewport()->rect().center());
  rebuild();
  m_canvas->setTransform(t);
  m_canvas->centerOn(centre);
}

int GraphView::clusterAt(const QPointF& scenePos) const {
  if (m_mode != Fused) return -1;
  int best = -1;
  for (QGraphicsItem* it : m_canvas->scene()->items(scenePos)) {
    QString type = it->data(kTypeKey).toString();
    int index = it->data(kIndexKey).toInt();
    if (type == "node" && index >= 0 && index < m_graph.nodes.size()) {
      const GraphNode& n = m_graph.nodes[index];
      if (n.kind == "group") return n.group;
      if (n.cluster >= 0) return n.cluster;
    } else if (type == "cluster" && best < 0) {
      best = index;
    }
  }
  return best;
}

QPointF GraphView::clusterCenter(int c) const {
  if (c < 0 || c >= m_graph.clusters.size()) return {};
  if (!m_graph.clusters[c].box.isNull()) return m_graph.clusters[c].box.center();
  for (const GraphNode& n : m_graph.nodes)
    if (n.kind == "group" && n.group == c) return n.box.center();
  return {};
}

QMenu* GraphView::showContextMenu(const QPointF& scenePos, const QPoint& global) {
  auto* menu = new QMenu(this);
  menu->setAttribute(Qt::WA_DeleteOnClose);
  int c = clusterAt(scenePos);
  if (c >= 0) {
    QString name = m_graph.clusters.value(c).name;
    menu->addAction("Open in schedule editor", this, [this, c] { emit groupActivated(c); })->setObjectName("openGroup");
    if (m_collapsed.contains(c)) menu->addAction("Expand " + name, this, [this, c] { setCollapsed(c, false); })->setObjectName("expandGroup");
    else menu->addAction("Collapse " + name, this, [this, c] { setCollapsed(c, true); })->setObjectName("collapseGroup");
    menu->addSeparator();
  }
  if (m_mode == Fused && m_hasModel && !m_model.fused.clusters.isEmpty()) {
    menu->addAction("Collapse all groups", this, [this] { setAllCollapsed(true); })->setObjectName("collapseAll");
    menu->addAction("Expand all groups", this, [this] { setAllCollapsed(false); })->setObjectName("expandAll");
  }
  menu->addAction("Fit to view", this, &GraphView::fitAll);
  if (!global.isNull()) menu->popup(global);
  return menu;
}

}  // namespace loom::views
