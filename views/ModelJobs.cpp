// Model import and graph building for the model view (Graphviz layout in GraphLayout.cpp).
#include "views/ModelJobs.h"

#include <onnx/onnx_pb.h>

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QSet>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core/driver/InputShapes.h"
#include "core/driver/LoadModel.h"
#include "core/frontend/torch/TorchImporter.h"
#include "core/driver/DefaultSchedule.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Op.h"
#include "core/graph/PassManager.h"
#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Op.h"
#include "core/tune/FlopCount.h"
#include "views/GraphLayout.h"

namespace loom::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString typeText(const graph::Expr& e) { return e.type().defined() ? q(graph::typeStr(e.type())) : QString(); }

/// "float32[64, 3, 7, 7] min -0.52 max 0.61 mean 0.001": a constant's type and value statistics.
QString constantText(const graph::ConstantNode& c, const graph::Expr& e) {
  QString text = typeText(e);
  int64_t n = c.data.numel();
  if (n == 0 || n > (int64_t(1) << 22)) return text;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = tir::getElement(c.data, i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  return text + QString("  min %1 max %2 mean %3").arg(lo, 0, 'g', 3).arg(hi, 0, 'g', 3).arg(sum / double(n), 0, 'g', 3);
}

/// A scale or zero point of a qnn op: its value ("0.0235"), "per channel (64): 0.001 .. 0.004"
/// for a vector, or "computed at run time" with its type when it is not a constant.
QString quantParamText(const graph::Expr& e) {
  auto* c = e.as<graph::ConstantNode>();
  if (!c) return "computed at run time, " + typeText(e);
  const int64_t n = c->data.numel();
  if (n == 1) return QString::number(tir::getElement(c->data, 0), 'g', 6);
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, tir::getElement(c->data, i));
    hi = std::max(hi, tir::getElement(c->data, i));
  }
  return QString("per channel (%1): %2 .. %3").arg(n).arg(lo, 0, 'g', 6).arg(hi, 0, 'g', 6);
}

/// The element type of `e` ("uint8"), empty when untyped.
QString dtypeText(const graph::Expr& e) {
  auto* t = e.type().defined() ? e.type().as<graph::TensorTypeNode>() : nullptr;
  return t ? q(t->dtype.str()) : QString();
}

/// The weight operand of a packed int8 op, as two lines: "weights	int8, 4 per int32 word, packed at
/// compile time: min -64 max 63" and "packed weights	Tensor[(4, 1, 3, 3, 4, 16), int32]" (int8
/// tensors: their own statistics).
QStringList packedWeightText(const graph::Expr& e) {
  auto* k = e.as<graph::ConstantNode>();
  if (!k) return {"weights	" + typeText(e)};
  if (k->data.dtype().bits != 32) return {"weights	int8 per channel block: " + constantText(*k, e)};
  int lo = 127, hi = -128;
  const int64_t n = k->data.numel();
  for (int64_t i = 0; i < n && n <= (int64_t(1) << 22); ++i) {
    const auto w = uint32_t(k->data.as<int32_t>()[i]);
    for (int b = 0; b < 4; ++b) {
      const int v = int8_t(uint8_t(w >> (8 * b)));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return {"weights	int8, 4 per int32 word, packed at compile time: min " + QString::number(lo) + " max " +
              QString::number(hi),
          "packed weights	" + typeText(e)};
}

/// The names of a qnn op's scale and zero-point operands by argument index, and which operand's
/// or result's quantization they describe; empty for other ops.
struct QuantOperands {
  std::map<size_t, QString> names;
  std::map<size_t, QStringList> described;  ///< operands listed with their own lines (packed weights, tables)
  QStringList lines;  ///< "quantized	uint8, scale 0.02, zero point 128" lines
};
/// `resolve` maps an operand to the constant it stands for (a fused group's parameter bound to
/// a constant), or returns it as it is.
QuantOperands quantOperands(const graph::CallNode& c, const std::function<graph::Expr(const graph::Expr&)>& resolve) {
  QuantOperands r;
  const std::string& op = c.op->name;
  std::vector<graph::Expr> a;
  for (const graph::Expr& e : c.args) a.push_back(resolve(e));
  auto line = [&](const QString& what, const QString& dtype, size_t scale, size_t zp) {
    r.lines << what + "	" + dtype + ", scale " + quantParamText(a[scale]) + ", zero point " + quantParamText(a[zp]);
  };
  if (op == "qnn.quantize" && a.size() == 3) {
    r.names = {{1, "scale"}, {2, "zero point"}};
    line("quantized output", q(c.attrs.getDType("out_dtype").str()), 1, 2);
  } else if (op == "qnn.dequantize" && a.size() == 3) {
    r.names = {{1, "scale"}, {2, "zero point"}};
    line("quantized input", dtypeText(a[0]), 1, 2);
  } else if (op == "qnn.requantize" && a.size() == 4) {
    r.names = {{1, "input scale"}, {2, "output scale"}, {3, "output zero point"}};
    line("quantized output", q(c.attrs.getDType("out_dtype").str()), 2, 3);
  } else if (op == "qnn.add" && a.size() == 8) {
    r.names = {{2, "a scale"}, {3, "a zero point"}, {4, "b scale"}, {5, "b zero point"}, {6, "output scale"},
               {7, "output zero point"}};
    line("quantized input a", dtypeText(a[0]), 2, 3);
    line("quantized input b", dtypeText(a[1]), 4, 5);
    line("quantized output", q(c.attrs.getDType("out_dtype").str()), 6, 7);
  } else if ((op == "qnn.conv2d" || op == "qnn.dense" || op == "qnn.matmul") && a.size() == 4) {
    r.names = {{2, "data zero point"}, {3, "weight zero point"}};
    r.lines << "integer product	" + dtypeText(a[0]) + " x " + dtypeText(a[1]) + " -> int32 accumulator";
  } else if (op.rfind("qnn.", 0) == 0 && op.size() > 5 && op.compare(op.size() - 5, 5, "_u8s8") == 0 && a.size() == 2) {
    // The packed int8 convs and dense layers: u8 data x s8 weights packed at compile time.
    r.lines << "integer product	" + dtypeText(a[0]) + " x int8 -> int32 accumulator";
    if (c.attrs.has("pad_value"))
      r.lines << "data zero point	" + QString::number(c.attrs.getInt("pad_value")) +
                     ": the padding value; folded into a per-channel correction";
    if (c.attrs.has("pairs16"))
      r.lines << QString("byte pairs in int16	") +
                     (c.attrs.getInt("pairs16") ? "yes: every weight pair has |w0| + |w1| <= 128"
                                                : "no: a weight pair can leave int16 (exact wide form)");
    r.described[1] = packedWeightText(a[1]);
  } else if (op == "qnn.lookup" && a.size() == 2) {
    r.lines << "lookup	" + dtypeText(a[1]) + " table of 256 entries, one per " + dtypeText(a[0]) +
                   " input value, built at compile time";
    if (auto* k = a[1].as<graph::ConstantNode>()) r.described[1] = {"table	" + constantText(*k, a[1])};
  }
  for (const auto& [i, name] : r.names)
    if (i < a.size()) r.lines << name + "	" + quantParamText(a[i]);
  for (const auto& [i, text] : r.described) r.lines << text;  // NOLINT: QStringList appends
  return r;
}

class Builder {
public:
  GraphData run(const graph::Function& f) {
    for (const graph::Var& p : f->params) {
      m_ids[p.get()] = addNode("input", q(p->name), q(graph::typeStr(p->annotation)), "input", {}, -1);
    }
    int out = emitValues(f->body, -1);
    int sink = addNode("output", "output", typeText(f->body), "output", {}, -1);
    if (out >= 0) addEdge(out, sink, typeText(f->body));
    return std::move(m_g);
  }

private:
  GraphData m_g;
  QHash<const graph::ExprNode*, int> m_ids;  // drawn node of a value (-1: a constant)

  int addNode(QString op, QString name, QString shape, QString kind, QStringList props, int cluster) {
    GraphNode n;
    n.id = QString("n%1").arg(m_g.nodes.size());
    n.op = std::move(op);
    n.name = std::move(name);
    n.shape = std::move(shape);
    n.kind = std::move(kind);
    n.cluster = cluster;
    n.properties = QStringList{"op\t" + n.op, "name\t" + n.name, "output\t" + n.shape} + props;
    m_g.nodes.push_back(n);
    return int(m_g.nodes.size()) - 1;
  }

  void addEdge(int from, int to, QString label) {
    for (const GraphEdge& e : m_g.edges)
      if (e.from == from && e.to == to) return;
    m_g.edges.push_back({from, to, std::move(label), {}});
  }

  /// Draws the values under `root` (operands first) inside `cluster`; returns root's node.
  int emitValues(const graph::Expr& root, int cluster) {
    for (const graph::Expr& n : graph::postOrder(root, false)) {
      if (m_ids.contains(n.get()) || n->kind == graph::ExprKind::Function) continue;
      if (n.as<graph::ConstantNode>()) {
        m_ids[n.get()] = -1;
      } else if (auto* v = n.as<graph::VarNode>()) {
        m_ids[n.get()] = addNode("input", q(v->name), typeText(n), "input", {}, cluster);
      } else if (auto* c = n.as<graph::CallNode>(); c && c->fn.defined()) {
        m_ids[n.get()] = fusedCall(*c);
      } else if (auto* c = n.as<graph::CallNode>()) {
        QStringList props;
        for (const auto& [key, value] : c->attrs.values()) props << "attr " + q(key) + "\t" + q(graph::attrValueStr(value));
        // qnn ops: the quantization of their operands and result (scales, zero points) by name.
        const QuantOperands quant = quantOperands(*c, [&](const graph::Expr& e) { return resolveConstant(e); });
        props << quant.lines;
        for (size_t i = 0; i < c->args.size(); ++i) {
          const graph::Expr& a = c->args[i];
          if (quant.names.count(i) || quant.described.count(i)) continue;  // listed by name above
          if (m_constParams.contains(a.get())) continue;  // listed with its values by fusedCall
          if (auto* k = a.as<graph::ConstantNode>())
            props << QString("input %1 (%2)\t").arg(i).arg(k->name.empty() ? QString("const") : q(k->name)) + constantText(*k, a);
          else
            props << QString("input %1\t").arg(i) + typeText(a);
        }
        int id = addNode(q(c->op->name), q(c->name), typeText(n), "op", props, cluster);
        for (const graph::Expr& a : c->args)
          if (int from = m_ids.value(a.get(), -1); from >= 0) addEdge(from, id, typeText(a));
        m_ids[n.get()] = id;
      } else if (auto* t = n.as<graph::TupleNode>()) {
        int id = addNode("tuple", "tuple", typeText(n), "tuple", {}, cluster);
        for (const graph::Expr& x : t->fields)
          if (int from = m_ids.value(x.get(), -1); from >= 0) addEdge(from, id, typeText(x));
        m_ids[n.get()] = id;
      } else if (auto* g = n.as<graph::TupleGetItemNode>()) {
        int id = addNode(QString(".%1").arg(g->index), "get item", typeText(n), "tuple", {}, cluster);
        if (int from = m_ids.value(g->tuple.get(), -1); from >= 0) addEdge(from, id, typeText(g->tuple));
        m_ids[n.get()] = id;
      }
    }
    return m_ids.value(root.get(), -1);
  }

  /// A fused group: its body's ops inside a cluster, its parameters bound to the call's arguments.
  int fusedCall(const graph::CallNode& call) {
    const graph::FunctionNode& fn = *call.fn;
    int cluster = int(m_g.clusters.size());
    m_g.clusters.push_back({fn.name.empty() ? QString("group %1").arg(cluster) : q(fn.name), {}});
    for (size_t i = 0; i < fn.params.size() && i < call.args.size(); ++i) {
      const graph::Expr& a = call.args[i];
      m_ids[fn.params[i].get()] = m_ids.value(a.get(), -1);
      if (a.as<graph::ConstantNode>()) m_constParams.insert(fn.params[i].get(), a);
    }
    int before = int(m_g.nodes.size());
    int root = emitValues(fn.body, cluster);
    // Constants reach fused bodies as parameters: list them in the properties of their users.
    for (const graph::Expr& n : graph::postOrder(fn.body, false)) {
      auto* c = n.as<graph::CallNode>();
      int id = m_ids.value(n.get(), -1);
      if (!c || id < before) continue;
      const QuantOperands quant = quantOperands(*c, [&](const graph::Expr& e) { return resolveConstant(e); });
      for (size_t i = 0; i < c->args.size(); ++i)
        if (auto it = m_constParams.find(c->args[i].get());
            it != m_constParams.end() && !quant.names.count(i) && !quant.described.count(i)) {
          auto* k = it->as<graph::ConstantNode>();
          m_g.nodes[id].properties << QString("input %1 (%2)\t").arg(i).arg(k->name.empty() ? QString("const") : q(k->name)) +
                                          constantText(*k, *it);
        }
    }
    return root;
  }

  QHash<const graph::ExprNode*, graph::Expr> m_constParams;

  /// The constant a fused group's parameter is bound to, else `e`.
  graph::Expr resolveConstant(const graph::Expr& e) const { return m_constParams.value(e.get(), e); }
};

void checkCancel(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load()) LOOM_THROW(ValueError) << "cancelled";
}

/// "1x8x16x16;16x8x3x3;..." of a fused call: its arguments' and results' static shapes.
QString callSignature(const graph::CallNode& call, const graph::Expr& self) {
  QStringList parts;
  std::function<void(const graph::Type&)> add = [&](const graph::Type& t) {
    if (!t.defined()) return;
    if (const auto* tt = t.as<graph::TensorTypeNode>()) {
      QStringList dims;
      if (tt->isStatic())
        for (int64_t d : tt->staticShape()) dims << QString::number(d);
      else
        dims << "?";
      parts << dims.join('x');
    } else if (const auto* tup = t.as<graph::TupleTypeNode>()) {
      for (const auto& f : tup->fields) add(graph::Type(f));
    }
  };
  for (const graph::Expr& a : call.args) add(a.type());
  add(self.type());
  return parts.join(';');
}

/// The same signature of a kernel: its buffers' shapes, inputs then results.
QString kernelSignature(const tir::PrimFunc& f) {
  QStringList parts;
  for (const auto& [param, buffer] : f->bufferMap) {
    QStringList dims;
    for (const tir::Expr& e : buffer->shape) {
      const int64_t* v = tir::asConstInt(e);
      dims << (v ? QString::number(*v) : QString("?"));
    }
    parts << dims.join('x');
  }
  return parts.join(';');
}

QString sanitized(const std::string& s) {
  QString out = q(s);
  for (QChar& c : out)
    if (!(c.isLetterOrNumber() && c.unicode() < 128) && c != '_') c = '_';
  return out;
}

/// The shapes of the tensors in `folder`/test_data_set_0/input_*.pb by tensor name, and in file
/// order (a tensor may have no name): what the model's own test data feeds it.
void testDataShapes(const QString& folder, std::map<std::string, std::vector<int64_t>>& byName,
                    std::vector<std::vector<int64_t>>& inOrder) {
  for (int k = 0;; ++k) {
    QFile f(folder + QString("/test_data_set_0/input_%1.pb").arg(k));
    if (!f.open(QIODevice::ReadOnly)) return;
    QByteArray bytes = f.readAll();
    onnx::TensorProto t;
    if (!t.ParseFromArray(bytes.constData(), int(bytes.size()))) return;
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    if (!t.name().empty()) byName[t.name()] = dims;
    inOrder.push_back(dims);
  }
}

/// The model's graph inputs (not initializers) as the file declares them, and their concrete
/// shapes: `overrides` by input name, else the file's when all dims are static, else those of
/// the model folder's test_data_set_0, else none. Returns the static shapes of the inputs with
/// symbolic dims (what a static import takes) and sets `complete` when every input has one.
std::map<std::string, std::vector<int64_t>> concreteInputShapes(const QString& path, const QMap<QString, QVector<qint64>>& overrides,
                                                                QVector<ModelInput>& inputs, bool& complete) {
  std::map<std::string, std::vector<int64_t>> shapes;
  complete = true;
  QFile f(path);
  onnx::ModelProto model;
  if (!f.open(QIODevice::ReadOnly)) return shapes;
  QByteArray bytes = f.readAll();
  if (!model.ParseFromArray(bytes.constData(), int(bytes.size()))) return shapes;
  std::map<std::string, std::vector<int64_t>> testByName;
  std::vector<std::vector<int64_t>> testInOrder;
  testDataShapes(QFileInfo(path).absolutePath(), testByName, testInOrder);
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  size_t position = 0;  // among the graph inputs that are not initializers
  for (const auto& in : model.graph().input()) {
    if (initializers.count(in.name())) continue;
    const size_t index = position++;
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    ModelInput mi;
    mi.name = q(in.name());
    std::vector<int64_t> dims;
    bool symbolic = false;
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      bool known = d.has_dim_value() && d.dim_value() > 0;
      symbolic |= !known;
      mi.declared << (known ? QString::number(d.dim_value()) : d.has_dim_param() && !d.dim_param().empty() ? q(d.dim_param()) : QString("?"));
      dims.push_back(known ? d.dim_value() : 0);
    }
    // The test data's shape when it fits the declared one (its rank and static dims).
    auto fits = [&](const std::vector<int64_t>& t) {
      if (t.size() != dims.size()) return false;
      for (size_t d = 0; d < t.size(); ++d)
        if (t[d] <= 0 || (dims[d] > 0 && t[d] != dims[d])) return false;
      return true;
    };
    if (auto it = overrides.find(mi.name); it != overrides.end()) {
      if (it->size() != int(dims.size()))
        LOOM_THROW(ValueError) << "input shape for '" << in.name() << "' has " << it->size() << " dims; the model declares "
                               << dims.size() << " (" << mi.declared.join(", ").toStdString() << ")";
      for (qint64 v : *it)
        if (v < 0) LOOM_THROW(ValueError) << "input shape for '" << in.name() << "': dims must be positive";
      std::vector<int64_t> set(it->begin(), it->end());
      // A 0 is a dim set without a value ("W<=2048"): test_data_set_0's extent there.
      auto fitsSet = [&](const std::vector<int64_t>& t) {
        if (t.size() != set.size()) return false;
        for (size_t d = 0; d < t.size(); ++d)
          if (set[d] == 0 && t[d] <= 0) return false;
        return true;
      };
      const std::vector<int64_t>* fill = nullptr;
      if (std::find(set.begin(), set.end(), 0) != set.end()) {
        if (auto t = testByName.find(in.name()); t != testByName.end() && fitsSet(t->second)) fill = &t->second;
        else if (testByName.empty() && index < testInOrder.size() && fitsSet(testInOrder[index])) fill = &testInOrder[index];
      }
      dims = set;
      if (fill)
        for (size_t d = 0; d < dims.size(); ++d)
          if (dims[d] == 0) dims[d] = (*fill)[d];
      bool anyValue = false;  // a symbolic dim given a value here
      for (size_t d = 0; d < set.size(); ++d) anyValue |= set[d] > 0 && !mi.declared[int(d)].at(0).isDigit();
      if (std::find(dims.begin(), dims.end(), 0) == dims.end()) mi.shapeSource = anyValue || !fill ? "set" : "test_data_set_0";
      symbolic = true;  // an override of a static dim is imported as given
    } else if (!symbolic) {
      mi.shapeSource = "file";
    } else if (auto t = testByName.find(in.name()); t != testByName.end() && fits(t->second)) {
      dims = t->second;
      mi.shapeSource = "test_data_set_0";
    } else if (testByName.empty() && index < testInOrder.size() && fits(testInOrder[index])) {
      dims = testInOrder[index];
      mi.shapeSource = "test_data_set_0";
    }
    if (!mi.shapeSource.isEmpty()) {
      mi.shape = QVector<qint64>(dims.begin(), dims.end());
      if (symbolic) shapes[in.name()] = dims;
    } else {
      complete = false;
    }
    inputs << mi;
  }
  for (auto it = overrides.begin(); it != overrides.end(); ++it)
    if (std::none_of(inputs.begin(), inputs.end(), [&](const ModelInput& m) { return m.name == it.key(); }))
      LOOM_THROW(ValueError) << "the model has no input '" << it.key().toStdString() << "'";
  return shapes;
}

}  // namespace

GraphData buildGraphData(const graph::Function& main) { return Builder().run(main); }

QString inputShapesSpec(const QVector<ModelInput>& inputs) {
  QStringList parts;
  for (const ModelInput& in : inputs) {
    if (!in.hasShape()) continue;
    QStringList dims;
    for (qint64 d : in.shape) dims << QString::number(d);
    parts << in.name + ":[" + dims.join(',') + "]";
  }
  return parts.join(',');
}

bool parseInputShapesSpec(const QString& spec, QMap<QString, QVector<qint64>>& out, QString* error, QString* symbolic) {
  out.clear();
  if (symbolic) symbolic->clear();
  try {
    QStringList symbolicParts;
    for (const driver::InputShape& in : driver::parseInputShapes(spec.toStdString()).inputs) {
      QVector<qint64> values;
      bool anySymbolic = false;
      QStringList dims;
      for (const driver::InputDim& d : in.dims) {
        anySymbolic |= !d.isStatic();
        values << (d.isStatic() ? d.value : d.example > 0 ? d.example : 0);
        driver::InputDim noValue = d;
        noValue.example = -1;
        dims << q(noValue.str());  // "48", "W", "?", "W<=2048": the value dropped
      }
      out[q(in.name)] = values;
      if (anySymbolic) symbolicParts << q(in.name) + ":[" + dims.join(',') + "]";
    }
    if (symbolic) *symbolic = symbolicParts.join(',');
  } catch (const Error& e) {
    if (error) *error = q(e.what());
    return false;
  }
  return true;
}

ModelData loadModelData(const QString& path, const std::atomic<bool>* cancel, const QString& layout,
                        const QMap<QString, QVector<qint64>>& inputShapes, const QString& torchSpec,
                        const QString& symbolicSpec) {
  QElapsedTimer timer;
  timer.start();
  if (layout != "NCHW" && layout != "NCHWc") LOOM_THROW(ValueError) << "unknown conv layout '" << layout.toStdString() << "' (NCHW or NCHWc)";
  ModelData m;
  m.path = path;
  m.layout = layout;
  const bool nchwc = layout == "NCHWc";
  // The views show the model with its symbolic dims; the kernels are made at the concrete shapes.
  graph::Module dynamic, concrete;
  bool haveDynamic = false, haveConcrete = false, sameModule = false;
  if (frontend::looksLikeTorchScript(path.toStdString())) {
    concrete = driver::loadModel(path.toStdString(), torchSpec.toStdString()).module;  // TorchScript records no shapes
    haveConcrete = true;
  } else {
    bool complete = false;
    std::map<std::string, std::vector<int64_t>> shapes = concreteInputShapes(path, inputShapes, m.inputs, complete);
    std::string symbolicError;
    try {
      if (symbolicSpec.isEmpty()) {
        dynamic = frontend::importOnnx(path.toStdString(), frontend::ImportOptions{});
      } else {
        // Symbolic dims as the user named and bounded them, exactly as `loom compile` imports.
        driver::LoadedModel lm = driver::loadModel(path.toStdString(), symbolicSpec.toStdString());
        dynamic = lm.module;
        m.symbolBounds = lm.symbolBounds;
      }
      dynamic = graph::runGraphPasses(dynamic, {"infer-type"});
      haveDynamic = true;
    } catch (const Error& e) {
      // Nothing else to show, or the user's own symbolic shapes do not fit: the import's error.
      if (!complete || shapes.empty() || !symbolicSpec.isEmpty()) throw;
      symbolicError = e.what();
    }
    checkCancel(cancel);
    if (complete && (!shapes.empty() || !haveDynamic)) {
      frontend::ImportOptions io;
      io.inputShapes = shapes;
      concrete = frontend::importOnnx(path.toStdString(), io);
      haveConcrete = true;
    } else if (complete) {
      haveConcrete = sameModule = true;  // a static model: one module
    }
    if (!symbolicError.empty())
      m.symbolicNote = QString("shown at the input shapes: the model does not import with symbolic dims (%1)").arg(q(symbolicError));
  }
  if (haveConcrete && !sameModule) concrete = graph::runGraphPasses(concrete, {"infer-type"});
  if (!haveDynamic) {
    dynamic = concrete;
    sameModule = true;
  }
  checkCancel(cancel);
  graph::Module optimized = graph::runGraphPasses(dynamic, graph::optimizePipeline());
  checkCancel(cancel);
  graph::Module fused = graph::runGraphPasses(dynamic, graph::fusePipeline(nchwc));
  checkCancel(cancel);
  m.dynamicModule = std::make_shared<const graph::Module>(dynamic);
  m.dynamicFusedModule = std::make_shared<const graph::Module>(fused);
  if (haveConcrete && sameModule) {
    m.module = m.dynamicModule;
    m.fusedModule = m.dynamicFusedModule;
  } else if (haveConcrete) {
    m.module = std::make_shared<const graph::Module>(concrete);
    m.fusedModule = std::make_shared<const graph::Module>(graph::runGraphPasses(concrete, graph::fusePipeline(nchwc)));
    checkCancel(cancel);
  }
  m.imported = buildGraphData(dynamic.main());
  m.optimized = buildGraphData(optimized.main());
  m.fused = buildGraphData(fused.main());
  for (const GraphNode& n : m.imported.nodes) m.opCount += n.kind == "op";
  for (const GraphNode& n : m.optimized.nodes) m.optimizedOpCount += n.kind == "op";
  for (const GraphNode& n : m.fused.nodes) m.fusedOpCount += n.kind == "op";
  m.fusedGroups = int(m.fused.clusters.size());
  for (GraphData* g : {&m.fused, &m.imported, &m.optimized}) {
    checkCancel(cancel);
    layoutGraph(*g);
  }
  m.loadMs = double(timer.nsecsElapsed()) / 1e6;
  return m;
}

}  // namespace loom::views

namespace loom::views {

QVector<int> alignFusedCalls(const QVector<std::vector<std::string>>& shown, const QVector<std::vector<std::string>>& concrete) {
  QVector<int> match(shown.size(), -1);
  if (shown.size() == concrete.size()) {
    for (int i = 0; i < shown.size(); ++i) match[i] = i;
    return match;
  }
  // How well a shown call matches a concrete one: 2 for the same ops; 1 where the concrete
  // call's ops are a part of the shown call's (shape computations folded at the concrete shapes:
  // a position embedding's take-arange-take-add is take-add at a static length); else 0. The
  // alignment keeps the order and takes the most weight, so same-op matches win over partial ones.
  auto weight = [](const std::vector<std::string>& s, const std::vector<std::string>& c) {
    if (s == c) return 2;
    if (c.empty() || c.size() >= s.size()) return 0;
    std::vector<std::string> rest = s;
    for (const std::string& op : c) {
      auto it = std::find(rest.begin(), rest.end(), op);
      if (it == rest.end()) return 0;
      rest.erase(it);
    }
    return 1;
  };
  const int n = int(shown.size()), k = int(concrete.size());
  std::vector<std::vector<int>> best(size_t(n) + 1, std::vector<int>(size_t(k) + 1, 0));
  for (int i = n - 1; i >= 0; --i)
    for (int j = k - 1; j >= 0; --j) {
      const int w = weight(shown[i], concrete[j]);
      best[i][j] = std::max({best[i + 1][j], best[i][j + 1], w > 0 ? best[i + 1][j + 1] + w : 0});
    }
  for (int i = 0, j = 0; i < n && j < k;) {
    const int w = weight(shown[i], concrete[j]);
    if (w > 0 && best[i][j] == best[i + 1][j + 1] + w) match[i++] = j++;
    else if (best[i + 1][j] >= best[i][j + 1]) ++i;
    else ++j;
  }
  return match;
}

ModelGroups extractModelGroups(const ModelData& model, const std::atomic<bool>* cancel) {
  QElapsedTimer timer;
  timer.start();
  ModelGroups out;
  if (!model.module || !model.fusedModule)
    LOOM_THROW(ValueError) << "model '" << model.path.toStdString() << "' has symbolic input dims without values: set them with "
                           << "Model > Input Shapes… to make its kernels";
  // The same layout as the fused view, so that its clusters are these kernels.
  driver::CompileModelOptions options;
  options.desiredLayout = model.layout.toStdString();
  out.groups = driver::extractGroups(*model.module, {}, options);
  checkCancel(cancel);
  QHash<QString, int> byName;
  for (size_t k = 0; k < out.groups.size(); ++k) byName.insert(q(out.groups[k].name), int(k));
  QVector<QString> signatures;
  for (const driver::ModelGroup& g : out.groups) signatures << kernelSignature(g.func);
  // Walk the fused calls in the order compileModel names them (post order, names made unique
  // by a suffix): a first occurrence has its kernel's name; a repeat shares the kernel of an
  // earlier group with the same ops and the same argument and result shapes.
  QSet<QString> taken;
  for (const graph::Expr& e : graph::postOrder(model.fusedModule->main()->body, false)) {
    const auto* call = e.as<graph::CallNode>();
    if (!call || !call->fn.defined()) continue;
    QString name = sanitized(call->fn->name.empty() ? "fused" : call->fn->name);
    QString unique = name;
    for (int k = 1; taken.contains(unique); ++k) unique = name + "_" + QString::number(k);
    taken.insert(unique);
    out.clusterNodeNames << unique;
    int index = byName.value(unique, -1);
    if (index < 0) {
      QString sig = callSignature(*call, e);
      std::vector<std::string> ops;
      for (const graph::Expr& n : graph::postOrder(call->fn->body, false))
        if (const auto* c = n.as<graph::CallNode>(); c && c->op) ops.push_back(c->op->name);
      for (size_t k = 0; k < out.groups.size() && index < 0; ++k)
        if (out.groups[k].occurrences > 1 && signatures[int(k)] == sig && out.groups[k].ops == ops) index = int(k);
    }
    out.clusterGroup << index;
  }
  // The fused view shows the symbolic model: map its clusters onto the concrete model's fused
  // calls (alignFusedCalls).
  if (model.dynamicFusedModule && model.dynamicFusedModule != model.fusedModule) {
    auto callOps = [](const graph::Module& m) {
      QVector<std::vector<std::string>> calls;
      for (const graph::Expr& e : graph::postOrder(m.main()->body, false)) {
        const auto* call = e.as<graph::CallNode>();
        if (!call || !call->fn.defined()) continue;
        std::vector<std::string> ops;
        for (const graph::Expr& n : graph::postOrder(call->fn->body, false))
          if (const auto* c = n.as<graph::CallNode>(); c && c->op) ops.push_back(c->op->name);
        calls << ops;
      }
      return calls;
    };
    const QVector<std::vector<std::string>> shown = callOps(*model.dynamicFusedModule), concrete = callOps(*model.fusedModule);
    const QVector<int> match = alignFusedCalls(shown, concrete);
    QVector<int> group;
    QVector<QString> names;
    for (int j : match) {
      group << (j >= 0 ? out.clusterGroup[j] : -1);
      names << (j >= 0 ? out.clusterNodeNames[j] : QString());
    }
    out.clusterGroup = group;
    out.clusterNodeNames = names;
  }
  out.flops.reserve(out.groups.size());
  for (const driver::ModelGroup& g : out.groups) out.flops.push_back(tune::countFlops(g.func));
  out.defaultScripts.reserve(out.groups.size());
  for (const driver::ModelGroup& g : out.groups) {
    checkCancel(cancel);
    out.defaultScripts.push_back(driver::defaultScheduleScript(g.func, true));
  }
  out.ms = double(timer.nsecsElapsed()) / 1e6;
  return out;
}

QString flopsText(double flops) {
  if (flops <= 0) return QString();
  if (flops >= 1e9) return QString("%1 GFLOP").arg(flops / 1e9, 0, 'f', 2);
  if (flops >= 1e6) return QString("%1 MFLOP").arg(flops / 1e6, 0, 'f', 1);
  if (flops >= 1e3) return QString("%1 kFLOP").arg(flops / 1e3, 0, 'f', 1);
  return QString("%1 FLOP").arg(flops, 0, 'f', 0);
}

GraphData collapseClusters(const GraphData& g, const QSet<int>& collapsed, const QVector<QString>& costs) {
  GraphData out;
  out.clusters = g.clusters;
  QVector<int> map(g.nodes.size(), -1);
  QHash<int, int> groupNode;  // cluster -> its node in out
  QVector<int> opsIn(g.clusters.size(), 0);
  for (const GraphNode& n : g.nodes)
    if (n.cluster >= 0 && n.kind == "op") ++opsIn[n.cluster];
  // A collapsed cluster's result: the type of the value leaving it (its last node otherwise).
  QVector<QString> resultType(g.clusters.size());
  for (const GraphNode& n : g.nodes)
    if (n.cluster >= 0) resultType[n.cluster] = n.shape;
  for (const GraphEdge& e : g.edges) {
    int c = g.nodes[e.from].cluster;
    if (c >= 0 && g.nodes[e.to].cluster != c) resultType[c] = g.nodes[e.from].shape;
  }
  for (int i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    if (n.cluster >= 0 && collapsed.contains(n.cluster)) {
      auto it = groupNode.find(n.cluster);
      if (it == groupNode.end()) {
        GraphNode gn;
        gn.kind = "group";
        gn.group = n.cluster;
        gn.op = g.clusters[n.cluster].name;
        gn.name = gn.op;
        QString cost = costs.value(n.cluster);
        gn.shape = QString("%1 op%2 · %3%4").arg(opsIn[n.cluster]).arg(opsIn[n.cluster] == 1 ? "" : "s")
                       .arg(cost.isEmpty() ? QString() : cost + " · ").arg(resultType[n.cluster]);
        gn.properties = QStringList{"fused group\t" + gn.op, "ops\t" + QString::number(opsIn[n.cluster]),
                                    "output\t" + resultType[n.cluster]};
        if (!cost.isEmpty()) gn.properties << "cost\t" + cost + " per call";
        for (const GraphNode& m : g.nodes)
          if (m.cluster == n.cluster && m.kind == "op") gn.properties << "op\t" + m.op + (m.name.isEmpty() ? QString() : "  (" + m.name + ")");
        gn.id = QString("g%1").arg(n.cluster);
        it = groupNode.insert(n.cluster, int(out.nodes.size()));
        out.nodes.push_back(gn);
      }
      map[i] = *it;
      continue;
    }
    map[i] = int(out.nodes.size());
    GraphNode copy = n;
    copy.box = QRectF();
    out.nodes.push_back(copy);
  }
  QSet<QPair<int, int>> seen;
  for (const GraphEdge& e : g.edges) {
    int from = map[e.from], to = map[e.to];
    if (from == to || seen.contains({from, to})) continue;
    seen.insert({from, to});
    out.edges.push_back({from, to, e.label, {}});
  }
  for (int c : collapsed)
    if (c >= 0 && c < out.clusters.size()) out.clusters[c].box = QRectF();
  return out;
}

}  // namespace loom::views
