// Golden tests of the Relay-style graph printer: bindings, attributes, constants, tuples,
// functions.
#include <QtTest>

#include "GraphTestUtil.h"
#include "core/graph/Op.h"
#include "core/graph/Printer.h"
#include "core/graph/pass/FuseOps.h"
#include "core/graph/pass/InferType.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::testutil;

class TestGraphPrinter : public QObject {
  Q_OBJECT

private slots:
  void typedGraph() {
    Var x = makeVar("data", f32({1, 3, 8, 8}));
    Expr c = makeCall(
        "nn.conv2d", {x, randomConst({4, 3, 3, 3}, 1)},
        {{"strides", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    Expr b = makeCall("add", {c, makeScalar(1.5, DataType::Float(32))});
    Expr s =
        makeCall("split", {b}, {{"sections", std::vector<int64_t>{1, 3}}, {"axis", int64_t(1)}});
    Expr r = makeCall("nn.relu", {makeTupleGetItem(s, 1)});
    Expr out = makeTuple({makeTupleGetItem(s, 0), r});
    Module m;
    m.functions["main"] = makeFunction({x}, out);
    inferType(m);
    QCOMPARE(
        QString::fromStdString(printModule(m)),
        QString(
            R"(def @main(%data: Tensor[(1, 3, 8, 8), float32]) -> (Tensor[(1, 1, 4, 4), float32], Tensor[(1, 3, 4, 4), float32]) {
  %0 = nn.conv2d(%data, meta[Constant][0], strides=[2, 2], padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 4, 4, 4), float32] */;
  %1 = add(%0, 1.5f) /* ty=Tensor[(1, 4, 4, 4), float32] */;
  %2 = split(%1, sections=[1, 3], axis=1) /* ty=(Tensor[(1, 1, 4, 4), float32], Tensor[(1, 3, 4, 4), float32]) */;
  %3 = %2.0 /* ty=Tensor[(1, 1, 4, 4), float32] */;
  %4 = %2.1 /* ty=Tensor[(1, 3, 4, 4), float32] */;
  %5 = nn.relu(%4) /* ty=Tensor[(1, 3, 4, 4), float32] */;
  (%3, %5) /* ty=(Tensor[(1, 1, 4, 4), float32], Tensor[(1, 3, 4, 4), float32]) */
}
)"));
  }

  void untypedAndScalars() {
    Var x = makeVar("x", tensorType(Shape{Dim::symbol("n"), Dim(4)}, DataType::Int(64)));
    Expr a = makeCall("add", {x, makeScalar(2, DataType::Int(64))});
    Expr c = makeCall("cast", {a}, {{"dtype", DataType::Float(32)}});
    Expr m = makeCall("sum", {c}, {{"axis", std::vector<int64_t>{1}}, {"keepdims", int64_t(1)}});
    // Not typed yet: no type comments and no return type.
    QCOMPARE(QString::fromStdString(printFunction(makeFunction({x}, m))),
             QString(R"(def @main(%x: Tensor[(n, 4), int64]) {
  %0 = add(%x, 2i64);
  %1 = cast(%0, dtype="float32");
  sum(%1, axis=[1], keepdims=1)
}
)"));
    inferType(m);
    QVERIFY(printExpr(m).find("/* ty=Tensor[(n, 1), float32] */") != std::string::npos);
  }

  void oddVariableNames() {
    Var a = makeVar("0", f32({2}));
    Var b = makeVar("input:1", f32({2}));
    Var c = makeVar("x.2_ok", f32({2}));
    Expr e = makeCall("add", {makeCall("add", {a, b}), c});
    QCOMPARE(
        QString::fromStdString(printFunction(makeFunction({a, b, c}, e))),
        QString(
            R"(def @main(%"0": Tensor[(2,), float32], %"input:1": Tensor[(2,), float32], %x.2_ok: Tensor[(2,), float32]) {
  %0 = add(%"0", %"input:1");
  add(%0, %x.2_ok)
}
)"));
  }

  void defaultsAreOmittedAndConstantsNumbered() {
    Var x = makeVar("x", f32({1, 2, 4, 4}));
    Constant w = randomConst({2, 2, 1, 1}, 3);
    Expr c1 = makeCall("nn.conv2d", {x, w},
                       {{"strides", std::vector<int64_t>{1, 1}}, {"groups", int64_t(1)}});
    Expr c2 = makeCall("nn.conv2d", {c1, randomConst({2, 2, 1, 1}, 4)});
    Expr c3 = makeCall("nn.conv2d", {c2, w});
    std::string text = printExpr(c3);
    QCOMPARE(QString::fromStdString(text), QString(R"(%0 = nn.conv2d(%x, meta[Constant][0]);
%1 = nn.conv2d(%0, meta[Constant][1]);
nn.conv2d(%1, meta[Constant][0])
)"));
  }

  void fusedFunctions() {
    Var x = makeVar("x", f32({1, 2, 4, 4}));
    Expr c = makeCall("nn.conv2d", {x, randomConst({2, 2, 1, 1}, 5)});
    Expr r = makeCall("nn.relu", {makeCall("add", {c, makeScalar(1, DataType::Float(32))})});
    Expr s = makeCall("nn.softmax", {r}, {{"axis", int64_t(1)}});
    Module m;
    m.functions["main"] = makeFunction({x}, fuseOps(s));
    QCOMPARE(
        QString::fromStdString(printModule(m)),
        QString(R"(def @main(%x: Tensor[(1, 2, 4, 4), float32]) -> Tensor[(1, 2, 4, 4), float32] {
  %0 = fn (%p0: Tensor[(1, 2, 4, 4), float32], %p1: Tensor[(2, 2, 1, 1), float32], Primitive=1, Name="fused_nn_conv2d_add_nn_relu") -> Tensor[(1, 2, 4, 4), float32] {
    %0 = nn.conv2d(%p0, %p1) /* ty=Tensor[(1, 2, 4, 4), float32] */;
    %1 = add(%0, 1f) /* ty=Tensor[(1, 2, 4, 4), float32] */;
    nn.relu(%1) /* ty=Tensor[(1, 2, 4, 4), float32] */
  };
  %1 = %0(%x, meta[Constant][0]) /* ty=Tensor[(1, 2, 4, 4), float32] */;
  %2 = fn (%p0: Tensor[(1, 2, 4, 4), float32], Primitive=1, Name="fused_nn_softmax") -> Tensor[(1, 2, 4, 4), float32] {
    nn.softmax(%p0, axis=1) /* ty=Tensor[(1, 2, 4, 4), float32] */
  };
  %2(%1) /* ty=Tensor[(1, 2, 4, 4), float32] */
}
)"));
  }
};

QTEST_APPLESS_MAIN(TestGraphPrinter)
#include "test_printer.moc"
