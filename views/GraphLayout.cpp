// Graphviz layout of model graphs through libgvc, serialized by a mutex.
#include "views/GraphLayout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <graphviz/types.h>

#include <QHash>
#include <mutex>

namespace loom::views {

namespace {

QString dotEscape(const QString& s) {
  QString out = s;
  out.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
  return out;
}

/// Node size in points: the renderer uses a monospace font of about 6.6 points per character.
QSizeF nodeSize(const GraphNode& n) {
  qsizetype chars = std::max(n.op.size(), n.shape.size());
  return {std::max<qreal>(48, 6.8 * qreal(chars) + 18), n.kind == "op" ? 36.0 : 30.0};
}

std::mutex& graphvizMutex() {
  static std::mutex m;
  return m;
}

GVC_t* context() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

}  // namespace

QString graphToDot(const GraphData& g) {
  QString dot = "digraph model {\n  rankdir=TB; nodesep=0.25; ranksep=0.35;\n"
                "  node [shape=box, fixedsize=true];\n";
  auto nodeLine = [&](int i) {
    QSizeF sz = nodeSize(g.nodes[i]);
    return QString("    %1 [width=%2, height=%3];\n").arg(g.nodes[i].id).arg(sz.width() / 72.0).arg(sz.height() / 72.0);
  };
  for (int i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].cluster < 0) dot += nodeLine(i);
  for (int c = 0; c < g.clusters.size(); ++c) {
    QString members;
    for (int i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].cluster == c) members += nodeLine(i);
    if (members.isEmpty()) continue;  // collapsed into one node: no frame
    dot += QString("  subgraph cluster_%1 {\n    label=\"%2\"; fontsize=10; margin=10;\n").arg(c).arg(dotEscape(g.clusters[c].name));
    dot += members + "  }\n";
  }
  for (const GraphEdge& e : g.edges) dot += QString("  %1 -> %2;\n").arg(g.nodes[e.from].id, g.nodes[e.to].id);
  dot += "}\n";
  return dot;
}

void layoutGraph(GraphData& g) {
  if (g.nodes.isEmpty()) return;
  QByteArray dot = graphToDot(g).toUtf8();
  std::lock_guard<std::mutex> lock(graphvizMutex());
  GVC_t* gvc = context();
  Agraph_t* graph = agmemread(dot.constData());
  if (!graph) {
    g.layoutError = "Graphviz could not parse the generated dot text";
    return;
  }
  if (gvLayout(gvc, graph, "dot") != 0) {
    g.layoutError = "Graphviz dot layout failed";
    agclose(graph);
    return;
  }
  boxf bb = GD_bb(graph);
  double top = bb.UR.y;
  auto toScene = [&](pointf p) { return QPointF(p.x - bb.LL.x, top - p.y); };
  QHash<QString, int> index;
  for (int i = 0; i < g.nodes.size(); ++i) index.insert(g.nodes[i].id, i);
  for (Agnode_t* n = agfstnode(graph); n; n = agnxtnode(graph, n)) {
    auto it = index.find(QString::fromUtf8(agnameof(n)));
    if (it == index.end()) continue;
    QPointF c = toScene(ND_coord(n));
    double w = ND_width(n) * 72, h = ND_height(n) * 72;
    g.nodes[*it].box = QRectF(c.x() - w / 2, c.y() - h / 2, w, h);
  }
  QHash<QPair<int, int>, int> edgeIndex;
  for (int i = 0; i < g.edges.size(); ++i) edgeIndex.insert({g.edges[i].from, g.edges[i].to}, i);
  for (Agnode_t* n = agfstnode(graph); n; n = agnxtnode(graph, n)) {
    for (Agedge_t* e = agfstout(graph, n); e; e = agnxtout(graph, e)) {
      auto from = index.find(QString::fromUtf8(agnameof(agtail(e))));
      auto to = index.find(QString::fromUtf8(agnameof(aghead(e))));
      if (from == index.end() || to == index.end()) continue;
      auto ei = edgeIndex.find({*from, *to});
      splines* spl = ED_spl(e);
      if (ei == edgeIndex.end() || !spl || spl->size < 1) continue;
      const bezier& bz = spl->list[0];
      QVector<QPointF> pts;
      for (int k = 0; k < bz.size; ++k) pts.push_back(toScene(bz.list[k]));
      if (bz.eflag) pts.push_back(toScene(bz.ep));  // arrow tip: drawn as the last straight piece
      g.edges[*ei].spline = pts;
    }
  }
  for (int c = 1; c <= GD_n_cluster(graph); ++c) {
    Agraph_t* sg = GD_clust(graph)[c];
    QString name = QString::fromUtf8(agnameof(sg));
    bool okNum = false;
    int k = name.mid(QString("cluster_").size()).toInt(&okNum);
    if (!okNum || k < 0 || k >= g.clusters.size()) continue;
    boxf cb = GD_bb(sg);
    g.clusters[k].box = QRectF(toScene(pointf{cb.LL.x, cb.UR.y}), toScene(pointf{cb.UR.x, cb.LL.y}));
  }
  g.bounds = QRectF(0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);
  gvFreeLayout(gvc, graph);
  agclose(graph);
}

}  // namespace loom::views
