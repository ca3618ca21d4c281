// Structural equality, hashing and diff: equal modulo renaming, unequal on every field that matters.
#include <QtTest>

#include <cmath>
#include <limits>

#include "Builders.h"
#include "core/tir/StructuralEqual.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {
const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

Stmt loop(Var v, Expr extent, Stmt body, ForKind k = ForKind::Serial) { return forLoop(v, 0, extent, k, body); }

/// A 1-D copy B[i] = A[i] * s + 1 over a loop, everything fresh each call.
PrimFunc scaleFunc(int n, double s, std::string blockless = "x") {
  Buffer A = makeBuffer("A", f32, {n}), B = makeBuffer("B", f32, {n});
  Var i = makeVar(blockless);
  Stmt body = loop(i, n, bufferStore(B, bufferLoad(A, {i}) * floatImm(f32, s) + floatImm(f32, 1.0), {i}));
  return makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
}
}  // namespace

class TestStructural : public QObject {
  Q_OBJECT
private slots:
  void immediates() {
    QVERIFY(structuralEqual(intImm(i32, 3), intImm(i32, 3)));
    QVERIFY(!structuralEqual(intImm(i32, 3), intImm(i32, 4)));
    QVERIFY(!structuralEqual(intImm(i32, 3), intImm(DataType::Int(64), 3)));
    QVERIFY(!structuralEqual(intImm(i32, 1), floatImm(f32, 1.0)));
    QVERIFY(structuralEqual(stringImm("a"), stringImm("a")));
    QVERIFY(!structuralEqual(stringImm("a"), stringImm("b")));
    double nan = std::numeric_limits<double>::quiet_NaN();
    QVERIFY(structuralEqual(floatImm(f32, nan), floatImm(f32, nan)));
    QCOMPARE(structuralHash(floatImm(f32, nan)), structuralHash(floatImm(f32, nan)));
    QVERIFY(!structuralEqual(floatImm(f32, 0.0), floatImm(f32, -0.0)));
    QVERIFY(!structuralEqual(floatImm(f32, 1.0), floatImm(DataType::Float(64), 1.0)));
  }

  void freeVarsByIdentity() {
    Var x = makeVar("x"), y = makeVar("x");
    QVERIFY(structuralEqual(Expr(x) + 1, Expr(x) + 1));
    QVERIFY(!structuralEqual(Expr(x) + 1, Expr(y) + 1));  // same name, different variables
    QVERIFY(!structuralEqual(Expr(x) + 1, Expr(x) - 1));
    QVERIFY(!structuralEqual(Expr(x) + 1, Expr(x) + 2));
    QVERIFY(!structuralEqual(Expr(x), Expr(makeVar("x", DataType::Int(64)))));
    // With mapFreeVars, free variables match when they correspond consistently.
    QVERIFY(structuralEqual(Expr(x) + 1, Expr(y) + 1, true));
    QCOMPARE(structuralHash(Expr(x) + 1, true), structuralHash(Expr(y) + 1, true));
    QVERIFY(!structuralEqual(Expr(x) + x, Expr(x) + y, true));
    QVERIFY(!structuralEqual(Expr(x) + y, Expr(y) + y, true));
    QVERIFY(structuralHash(Expr(x) + x, true) != structuralHash(Expr(x) + y, true));
    Buffer A = makeBuffer("A", f32, {4}), B = makeBuffer("B", f32, {4});
    Var i = makeVar("i"), j = makeVar("j");
    QVERIFY(structuralEqual(bufferStore(A, floatImm(f32, 0), {i}), bufferStore(B, floatImm(f32, 0), {j}), true));
    QVERIFY(!structuralEqual(bufferStore(A, floatImm(f32, 0), {i}), bufferStore(B, floatImm(f32, 0), {j})));
    QVERIFY(structuralDiff(bufferStore(A, floatImm(f32, 0), {i}), bufferStore(B, floatImm(f32, 0), {j}), true).empty());
  }

  void boundVarsModuloRenaming() {
    Var a = makeVar("a"), b = makeVar("zz");
    QVERIFY(structuralEqual(let(a, 1, Expr(a) * 2), let(b, 1, Expr(b) * 2)));
    QCOMPARE(structuralHash(let(a, 1, Expr(a) * 2)), structuralHash(let(b, 1, Expr(b) * 2)));
    QVERIFY(!structuralEqual(let(a, 1, Expr(a) * 2), let(b, 2, Expr(b) * 2)));
    // Body uses the bound var on one side and a free var on the other.
    Var free = makeVar("a");
    QVERIFY(!structuralEqual(let(a, 1, Expr(a) * 2), let(b, 1, Expr(free) * 2)));
    // Two bound vars must correspond pairwise, not just both be bound.
    Var p = makeVar("p"), q = makeVar("q"), r = makeVar("p"), s = makeVar("q");
    Expr e1 = let(p, 1, let(q, 2, Expr(p) - Expr(q)));
    Expr e2 = let(r, 1, let(s, 2, Expr(r) - Expr(s)));
    Expr e3 = let(r, 1, let(s, 2, Expr(s) - Expr(r)));
    QVERIFY(structuralEqual(e1, e2));
    QVERIFY(!structuralEqual(e1, e3));
    QVERIFY(structuralHash(e1) != structuralHash(e3));
  }

  void functionsEqualModuloNames() {
    PrimFunc f = matmul(8, 8, 8), g = matmul(8, 8, 8);
    QVERIFY(structuralEqual(f, g));
    QCOMPARE(structuralHash(f), structuralHash(g));
    QCOMPARE(QString::fromStdString(structuralDiff(f, g)), QString());
    // Loop var names differ but are bound: still equal.
    QVERIFY(structuralEqual(scaleFunc(16, 2.0, "i"), scaleFunc(16, 2.0, "j")));
    QCOMPARE(structuralHash(scaleFunc(16, 2.0, "i")), structuralHash(scaleFunc(16, 2.0, "j")));
    // Buffer names are ignored.
    PrimFunc h = matmul(8, 8, 8);
    auto* n = new PrimFuncNode(*h.get());
    n->bufferMap[0].second = withName(n->bufferMap[0].second, "Renamed");
    // withName makes a new buffer, so the body's loads of the old A are now a different buffer.
    PrimFunc renamed(n);
    QVERIFY(!structuralEqual(f, renamed));
  }

  void functionsUnequalOnEveryField() {
    PrimFunc base = matmul(8, 8, 8);
    QVERIFY(!structuralEqual(base, matmul(8, 8, 4)));                       // extent and shape
    QVERIFY(!structuralEqual(base, matmul(8, 8, 8, DataType::Float(64))));  // dtype
    QVERIFY(!structuralEqual(base, matmul(8, 8, 8, f32, ForKind::Parallel)));  // loop kind
    QVERIFY(structuralHash(base) != structuralHash(matmul(8, 8, 4)));
    QVERIFY(structuralHash(base) != structuralHash(matmul(8, 8, 8, f32, ForKind::Parallel)));
    QVERIFY(!structuralEqual(scaleFunc(16, 2.0), scaleFunc(16, 3.0)));  // constant
    // attrs
    PrimFunc s = scaleFunc(16, 2.0);
    auto* n = new PrimFuncNode(*s.get());
    n->attrs["tir.noalias"] = boolImm(true);
    PrimFunc withAttr(n);
    QVERIFY(!structuralEqual(scaleFunc(16, 2.0), withAttr));
    QString d = QString::fromStdString(structuralDiff(scaleFunc(16, 2.0), withAttr));
    QVERIFY2(d.contains("tir.noalias"), qPrintable(d));
  }

  void bufferFields() {
    auto withBody = [](Buffer B) {
      Var i = makeVar("i");
      Buffer A = makeBuffer("A", f32, {16});
      return makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}},
                          loop(i, 16, bufferStore(B, bufferLoad(A, {i}), {i})));
    };
    PrimFunc base = withBody(makeBuffer("B", f32, {16}));
    QVERIFY(structuralEqual(base, withBody(makeBuffer("Other", f32, {16}))));
    QVERIFY(!structuralEqual(base, withBody(makeBuffer("B", f32, {16}, "shared"))));
    QVERIFY(!structuralEqual(base, withBody(makeBuffer("B", DataType::Float(16), {16}))));
    Buffer strided = makeBuffer("B", f32, {16});
    const_cast<BufferNode*>(strided.get())->strides = {Expr(2)};
    QVERIFY(!structuralEqual(base, withBody(strided)));
    Buffer offset = makeBuffer("B", f32, {16});
    const_cast<BufferNode*>(offset.get())->elemOffset = Expr(4);
    QVERIFY(!structuralEqual(base, withBody(offset)));
    Buffer aligned = makeBuffer("B", f32, {16});
    const_cast<BufferNode*>(aligned.get())->alignment = 16;
    QVERIFY(!structuralEqual(base, withBody(aligned)));
  }

  void symbolicShapesBind() {
    auto make = [](const char* nn) {
      Var n = makeVar(nn);
      Buffer A = makeBuffer("A", f32, {n});
      Var i = makeVar("i");
      return makePrimFunc("main", {A->data}, {{A->data, A}},
                          loop(i, n, bufferStore(A, floatImm(f32, 0), {i})));
    };
    QVERIFY(structuralEqual(make("n"), make("m")));
    QCOMPARE(structuralHash(make("n")), structuralHash(make("m")));
  }

  void blocks() {
    auto make = [](const char* name, IterType t, bool withInit, int annot) {
      Buffer A = makeBuffer("A", f32, {4});
      Var i = makeVar("i"), v = makeVar("v");
      Annotations ann;
      if (annot) ann["meta"] = Expr(annot);
      Block b = makeBlock(name, {IterVar(v, Range(0, 4), t)}, {}, {BufferRegion(A, {Range(v, 1)})},
                          bufferStore(A, floatImm(f32, 1), {v}),
                          withInit ? bufferStore(A, floatImm(f32, 0), {v}) : Stmt(), {}, ann);
      return loop(i, 4, blockRealize({i}, Expr(), b));
    };
    Stmt base = make("B", IterType::DataPar, false, 0);
    QVERIFY(structuralEqual(base, make("B", IterType::DataPar, false, 0)));
    QCOMPARE(structuralHash(base), structuralHash(make("B", IterType::DataPar, false, 0)));
    QVERIFY(!structuralEqual(base, make("C", IterType::DataPar, false, 0)));
    QVERIFY(!structuralEqual(base, make("B", IterType::CommReduce, false, 0)));
    QVERIFY(!structuralEqual(base, make("B", IterType::DataPar, true, 0)));
    QVERIFY(!structuralEqual(base, make("B", IterType::DataPar, false, 1)));
    QVERIFY(!structuralEqual(make("B", IterType::DataPar, false, 1), make("B", IterType::DataPar, false, 2)));
  }

  void sequencesAndControl() {
    Buffer A = makeBuffer("A", f32, {4});
    Var i = makeVar("i");
    Stmt s1 = bufferStore(A, floatImm(f32, 1), {0});
    Stmt s2 = bufferStore(A, floatImm(f32, 2), {1});
    QVERIFY(structuralEqual(seq({s1, s2}), seq({s1, s2})));
    QVERIFY(!structuralEqual(seq({s1, s2}), seq({s2, s1})));
    QVERIFY(!structuralEqual(seq({s1, s2}), seq({s1, s2, s1})));
    QVERIFY(!structuralEqual(ifThen(Expr(i) < 2, s1), ifThen(Expr(i) < 2, s1, s2)));
    QVERIFY(!structuralEqual(assertStmt(Expr(i) < 2, "a", s1), assertStmt(Expr(i) < 2, "b", s1)));
    QVERIFY(!structuralEqual(attrStmt(Expr(), "k1", 1, s1), attrStmt(Expr(), "k2", 1, s1)));
    QVERIFY(!structuralEqual(forLoop(i, 0, 4, ForKind::ThreadBinding, s1, "threadIdx.x"),
                             forLoop(i, 0, 4, ForKind::ThreadBinding, s1, "threadIdx.y")));
    // Same loop var object reused in sibling loops on both sides.
    Var j = makeVar("j"), k = makeVar("k");
    Stmt twice1 = seq({loop(j, 4, bufferStore(A, floatImm(f32, 1), {j})), loop(j, 4, bufferStore(A, floatImm(f32, 2), {j}))});
    Stmt twice2 = seq({loop(k, 4, bufferStore(A, floatImm(f32, 1), {k})), loop(k, 4, bufferStore(A, floatImm(f32, 2), {k}))});
    QVERIFY(structuralEqual(twice1, twice2));
    QCOMPARE(structuralHash(twice1), structuralHash(twice2));
  }

  void lowered() {
    auto make = [](int extent, const char* scope) {
      Var p = makeVar("p", DataType::Handle());
      Buffer T = makeBuffer("T", f32, {extent}, scope);
      const_cast<BufferNode*>(T.get())->data = p;
      Var i = makeVar("i");
      return allocate(p, f32, {extent},
                      declBuffer(T, loop(i, extent, bufferStore(T, floatImm(f32, 0), {i}))), scope);
    };
    QVERIFY(structuralEqual(make(8, "global"), make(8, "global")));
    QCOMPARE(structuralHash(make(8, "global")), structuralHash(make(8, "global")));
    QVERIFY(!structuralEqual(make(8, "global"), make(16, "global")));
    QVERIFY(!structuralEqual(make(8, "global"), make(8, "shared")));
  }

  void vectors() {
    Var x = makeVar("x");
    QVERIFY(structuralEqual(ramp(x, 1, 4), ramp(x, 1, 4)));
    QVERIFY(!structuralEqual(ramp(x, 1, 4), ramp(x, 1, 8)));
    QVERIFY(!structuralEqual(ramp(x, 1, 4), ramp(x, 2, 4)));
    QVERIFY(!structuralEqual(broadcast(x, 4), broadcast(x, 8)));
    QVERIFY(!structuralEqual(call(f32, "exp", {floatImm(f32, 1)}), call(f32, "log", {floatImm(f32, 1)})));
  }

  void diffText() {
    PrimFunc a = scaleFunc(16, 2.0), b = scaleFunc(16, 3.0);
    QString d = QString::fromStdString(structuralDiff(a, b));
    QVERIFY2(d.contains("body"), qPrintable(d));
    QVERIFY2(d.contains("2") && d.contains("3"), qPrintable(d));
    QVERIFY2(d.contains("value"), qPrintable(d));
    QString e = QString::fromStdString(structuralDiff(matmul(8, 8, 8), matmul(8, 8, 8, f32, ForKind::Parallel)));
    QVERIFY2(e.contains("serial") && e.contains("parallel"), qPrintable(e));
    QVERIFY(structuralDiff(Expr(1), Expr(1)).empty());
  }

  void modules() {
    IRModule m1, m2, m3;
    m1.add(matmul(4, 4, 4));
    m2.add(matmul(4, 4, 4));
    m3.add(matmul(4, 4, 2));
    QVERIFY(structuralEqual(m1, m2));
    QCOMPARE(structuralHash(m1), structuralHash(m2));
    QVERIFY(!structuralEqual(m1, m3));
    QVERIFY(!structuralDiff(m1, m3).empty());
  }
};

QTEST_APPLESS_MAIN(TestStructural)
#include "test_structural.moc"
