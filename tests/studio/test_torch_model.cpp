// The Studio's model loading for a TorchScript file: scopes as node names, shapes required.
#include <QtTest>

#include "core/frontend/torch/TorchImporter.h"
#include "views/ModelJobs.h"

using namespace loom;

class TestTorchModel : public QObject {
  Q_OBJECT
  const QString kModel = QStringLiteral(LOOM_SOURCE_DIR "/tests/torch/data/sequential_linear.pt");

private slots:
  void initTestCase() {
    std::string why;
    if (!frontend::torchScriptAvailable(&why)) QSKIP(why.c_str());
  }

  /// nn.Sequential(Dropout, Linear(4, 4), Dropout2d) traced (tests/torch/make_torch_cases.py, "dropout").
  void loadsTorchScript() {
    views::ModelData m = views::loadModelData(kModel, nullptr, "NCHW", {}, "input:[2,4]");
    bool dense = false;
    for (const views::GraphNode& n : m.imported.nodes) dense |= n.op == "nn.dense" && n.name == "1";
    QVERIFY2(dense, "the Linear is node '1', its module scope");
    QVERIFY(m.fusedGroups >= 1);
  }

  void needsShapes() {
    try {
      views::loadModelData(kModel, nullptr, "NCHW", {}, "");
      QFAIL("loaded without input shapes");
    } catch (const frontend::ImportError& e) {
      QVERIFY2(std::string(e.what()).find("no shape for input 'input'") != std::string::npos, e.what());
    }
  }
};

QTEST_MAIN(TestTorchModel)
#include "test_torch_model.moc"
