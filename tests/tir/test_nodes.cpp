// Construction of every TIR node kind, type matching of operators, and the mutator's sharing.
#include <QtTest>

#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

using namespace loom;
using namespace loom::tir;

class TestNodes : public QObject {
  Q_OBJECT
private slots:
  void immediates() {
    Expr a = 3;
    QCOMPARE(a.dtype(), DataType::Int(32));
    QCOMPARE(*asConstInt(a), int64_t(3));
    Expr f = floatImm(DataType::Float(32), 1.5);
    QVERIFY(f.as<FloatImmNode>() != nullptr);
    QVERIFY(f.as<IntImmNode>() == nullptr);
    QCOMPARE(boolImm(true).dtype(), DataType::Bool());
  }
  void typeMatching() {
    Var x = makeVar("x", DataType::Float(32));
    Expr e = Expr(x) + 1;  // the int immediate takes the float type
    auto* b = e.as<BinaryNode>();
    QVERIFY(b);
    QCOMPARE(b->b.dtype(), DataType::Float(32));
    QVERIFY(b->b.as<FloatImmNode>());
    Var i = makeVar("i", DataType::Int(64));
    Expr j = Expr(makeVar("j")) + Expr(i);  // int32 + int64 widens
    QCOMPARE(j.dtype(), DataType::Int(64));
    QVERIFY(j.as<BinaryNode>()->a.as<CastNode>());
    QCOMPARE((Expr(i) < 4).dtype(), DataType::Bool());
    Expr r = ramp(0, 1, 8);
    QCOMPARE(r.dtype(), DataType::Int(32, 8));
    QCOMPARE((r + 1).dtype(), DataType::Int(32, 8));
    // A float immediate never truncates to the integer side: the integer is cast to float.
    Var n = makeVar("n");
    for (Expr m : {Expr(n) * floatImm(DataType::Float(32), 0.5),
                   floatImm(DataType::Float(32), 0.5) * Expr(n)}) {
      QCOMPARE(m.dtype(), DataType::Float(32));
      auto* mb = m.as<BinaryNode>();
      QVERIFY(mb);
      const Expr& imm = mb->a.as<FloatImmNode>() ? mb->a : mb->b;
      const Expr& other = mb->a.as<FloatImmNode>() ? mb->b : mb->a;
      QCOMPARE(imm.as<FloatImmNode>()->value, 0.5);
      QVERIFY(other.as<CastNode>());
    }
  }
  void dataTypes() {
    for (const char* s : {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                          "float16", "bfloat16", "float32", "float64", "bool", "handle", "float32x8",
                          "int32x4", "boolx16"}) {
      auto t = DataType::parse(s);
      QVERIFY2(t.has_value(), s);
      QCOMPARE(QString::fromStdString(t->str()), QString(s));
    }
    QVERIFY(!DataType::parse("float7").has_value());
    QVERIFY(!DataType::parse("int").has_value());
    QVERIFY(!DataType::parse("floatx4").has_value());
    QCOMPARE(DataType::Float(32, 16).bytes(), 64);
  }
  void statementsAndMutator() {
    Buffer A = makeBuffer("A", DataType::Float(32), {16});
    Var i = makeVar("i");
    Stmt body = bufferStore(A, bufferLoad(A, {i}) * 2.0f, {i});
    QCOMPARE(body.as<BufferStoreNode>()->value.dtype(), DataType::Float(32));
    Stmt loop = forLoop(i, 0, 16, ForKind::Serial, body);
    // A mutator that changes nothing returns the same node.
    IRMutator m;
    QVERIFY(m.mutate(loop).same_as(loop));
    // Substitution rebuilds only the path to the change.
    Var k = makeVar("k");
    Stmt s2 = substitute(body, [&](const Var& v) { return v.same_as(i) ? Expr(k) : Expr(); });
    QVERIFY(!s2.same_as(body));
    QVERIFY(usesVar(s2, k));
    QVERIFY(!usesVar(s2, i));
    QVERIFY(seq({body, Stmt(), seq({body, body})}).as<SeqStmtNode>()->seq.size() == 3);
  }
  void internalCheckThrows() {
    bool thrown = false;
    try {
      LOOM_ICHECK(1 == 2) << "context";
    } catch (const InternalError& e) {
      thrown = QString(e.what()).contains("context");
    }
    QVERIFY(thrown);
  }
};

QTEST_APPLESS_MAIN(TestNodes)
#include "test_nodes.moc"
