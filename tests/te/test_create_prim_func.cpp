// createPrimFunc: block structure, regions, reductions and errors, and its TVM-identical matmul.
#include <QtTest>

#include "core/support/Error.h"
#include "core/te/CreatePrimFunc.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"

using namespace loom;
using namespace loom::tir;
namespace te = loom::te;

namespace {

const BlockNode* rootBlock(const PrimFunc& f) {
  auto* br = f->body.as<BlockRealizeNode>();
  return br ? br->block.get() : nullptr;
}

std::vector<Ref<BlockRealizeNode>> innerRealizes(const PrimFunc& f) {
  std::vector<Ref<BlockRealizeNode>> out;
  postOrderVisit(rootBlock(f)->body, [&](const IRNode* n) {
    if (n->nodeKind == NodeKind::BlockRealize)
      out.push_back(Ref<BlockRealizeNode>(static_cast<const BlockRealizeNode*>(n)));
  });
  return out;
}

std::vector<Ref<ForNode>> loopsAbove(const Stmt& nest) {
  std::vector<Ref<ForNode>> loops;
  Stmt s = nest;
  while (auto* f = s.as<ForNode>()) {
    loops.push_back(f);
    s = f->body;
  }
  return loops;
}

bool isVar(const Expr& e, const Var& v) {
  return e.same_as(v);
}

Expr f32(double v) {
  return floatImm(DataType::Float(32), v);
}

} // namespace

class TestCreatePrimFunc : public QObject {
  Q_OBJECT

private slots:
  void matmulStructure() {
    te::Tensor A = te::placeholder({16, 8}, DataType::Float(32), "A");
    te::Tensor B = te::placeholder({8, 4}, DataType::Float(32), "B");
    te::IterVar k = te::reduceAxis(8, "k");
    te::Tensor C = te::compute(
        {16, 4}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
    PrimFunc f = te::createPrimFunc({A, B, C});

    QCOMPARE(f->name, std::string("main"));
    QCOMPARE(f->params.size(), size_t(3));
    QVERIFY(f->paramBuffer(0).same_as(A->buffer));
    QVERIFY(f->paramBuffer(1).same_as(B->buffer));
    QVERIFY(f->paramBuffer(2).same_as(C->buffer));
    QVERIFY(f->attrs.count("tir.noalias"));

    auto* root = rootBlock(f);
    QVERIFY(root);
    QCOMPARE(root->name, std::string("root"));
    QVERIFY(root->iterVars.empty());
    QVERIFY(root->allocBuffers.empty());

    auto loops = loopsAbove(root->body);
    QCOMPARE(loops.size(), size_t(3));
    QCOMPARE(loops[0]->loopVar->name, std::string("i"));
    QCOMPARE(loops[1]->loopVar->name, std::string("j"));
    QCOMPARE(loops[2]->loopVar->name, std::string("k"));
    QVERIFY(isConstInt(loops[0]->extent, 16) && isConstInt(loops[1]->extent, 4) &&
            isConstInt(loops[2]->extent, 8));

    auto* br = loops[2]->body.as<BlockRealizeNode>();
    QVERIFY(br);
    QVERIFY(isConstInt(br->predicate, 1));
    const BlockNode* b = br->block.get();
    QCOMPARE(b->name, std::string("C"));
    QCOMPARE(b->iterVars.size(), size_t(3));
    QCOMPARE(b->iterVars[0].iterType, IterType::DataPar);
    QCOMPARE(b->iterVars[1].iterType, IterType::DataPar);
    QCOMPARE(b->iterVars[2].iterType, IterType::CommReduce);
    QCOMPARE(b->iterVars[0].var->name, std::string("v_i"));
    QVERIFY(isConstInt(b->iterVars[2].dom.extent, 8));
    for (size_t d = 0; d < 3; ++d)
      QVERIFY(isVar(br->iterValues[d], loops[d]->loopVar));

    const Var &vi = b->iterVars[0].var, &vj = b->iterVars[1].var, &vk = b->iterVars[2].var;
    QCOMPARE(b->reads.size(), size_t(2));
    QVERIFY(b->reads[0].buffer.same_as(A->buffer));
    QVERIFY(isVar(b->reads[0].region[0].min, vi) && isVar(b->reads[0].region[1].min, vk));
    QVERIFY(isConstInt(b->reads[0].region[0].extent, 1) &&
            isConstInt(b->reads[0].region[1].extent, 1));
    QVERIFY(b->reads[1].buffer.same_as(B->buffer));
    QVERIFY(isVar(b->reads[1].region[0].min, vk) && isVar(b->reads[1].region[1].min, vj));
    QCOMPARE(b->writes.size(), size_t(1));
    QVERIFY(b->writes[0].buffer.same_as(C->buffer));
    QVERIFY(isVar(b->writes[0].region[0].min, vi) && isVar(b->writes[0].region[1].min, vj));

    auto* init = b->init.as<BufferStoreNode>();
    QVERIFY(init);
    QVERIFY(init->value.as<FloatImmNode>() && init->value.as<FloatImmNode>()->value == 0.0);
    auto* upd = b->body.as<BufferStoreNode>();
    QVERIFY(upd && upd->buffer.same_as(C->buffer));
    auto* add = upd->value.as<BinaryNode>();
    QVERIFY(add && add->op == BinOp::Add);
    QVERIFY(add->a.as<BufferLoadNode>() && add->a.as<BufferLoadNode>()->buffer.same_as(C->buffer));
  }

  // The same program written by hand in TIR, the way TVM's te.create_prim_func builds it.
  void matmulEqualsHandWritten() {
    te::Tensor A = te::placeholder({16, 8}, DataType::Float(32), "A");
    te::Tensor B = te::placeholder({8, 4}, DataType::Float(32), "B");
    te::IterVar k = te::reduceAxis(8, "k");
    te::Tensor C = te::compute(
        {16, 4}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
    PrimFunc got = te::createPrimFunc({A, B, C});

    Buffer a = makeBuffer("A", DataType::Float(32), {16, 8});
    Buffer b = makeBuffer("B", DataType::Float(32), {8, 4});
    Buffer c = makeBuffer("C", DataType::Float(32), {16, 4});
    Var i = makeVar("i"), j = makeVar("j"), kk = makeVar("k");
    Var vi = makeVar("vi"), vj = makeVar("vj"), vk = makeVar("vk");
    auto* blk = new BlockNode();
    blk->name = "C";
    blk->iterVars = {IterVar(vi, Range(0, 16), IterType::DataPar),
                     IterVar(vj, Range(0, 4), IterType::DataPar),
                     IterVar(vk, Range(0, 8), IterType::CommReduce)};
    blk->reads = {BufferRegion(a, {Range(vi, 1), Range(vk, 1)}),
                  BufferRegion(b, {Range(vk, 1), Range(vj, 1)})};
    blk->writes = {BufferRegion(c, {Range(vi, 1), Range(vj, 1)})};
    blk->init = bufferStore(c, f32(0), {vi, vj});
    blk->body = bufferStore(
        c, bufferLoad(c, {vi, vj}) + bufferLoad(a, {vi, vk}) * bufferLoad(b, {vk, vj}), {vi, vj});
    Stmt nest = forLoop(i, 0, 16, ForKind::Serial,
                        forLoop(j, 0, 4, ForKind::Serial,
                                forLoop(kk, 0, 8, ForKind::Serial,
                                        blockRealize({i, j, kk}, boolImm(true), Block(blk)))));
    auto* root = new BlockNode();
    root->name = "root";
    root->body = nest;
    Var pa = makeVar("A", DataType::Handle()), pb = makeVar("B", DataType::Handle()),
        pc = makeVar("C", DataType::Handle());
    PrimFunc want = makePrimFunc("main", {pa, pb, pc}, {{pa, a}, {pb, b}, {pc, c}},
                                 blockRealize({}, boolImm(true), Block(root)),
                                 {{"tir.noalias", boolImm(true)}});
    QVERIFY2(structuralEqual(got, want), structuralDiff(got, want).c_str());

    // A different reduction (max) must not be equal.
    te::IterVar k2 = te::reduceAxis(8, "k");
    te::Tensor D = te::compute(
        {16, 4}, [&](Var i, Var j) { return te::max(A(i, k2) * B(k2, j), {k2}); }, "C");
    QVERIFY(!structuralEqual(te::createPrimFunc({A, B, D}), want));
  }

  void matmulGoldenText() {
    te::Tensor A = te::placeholder({128, 128}, DataType::Float(32), "A");
    te::Tensor B = te::placeholder({128, 128}, DataType::Float(32), "B");
    te::IterVar k = te::reduceAxis(128, "k");
    te::Tensor C = te::compute(
        {128, 128}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
    std::string got = printFunc(te::createPrimFunc({A, B, C}));
    std::string want = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)";
    QCOMPARE(QString::fromStdString(got).trimmed(), QString::fromStdString(want).trimmed());
  }

  void intermediatesAreAllocated() {
    te::Tensor A = te::placeholder({8}, DataType::Float(32), "A");
    te::Tensor T1 = te::compute(
        {8}, [&](Var i) { return A(i) * f32(2); }, "T1");
    te::Tensor T2 = te::compute(
        {8}, [&](Var i) { return T1(i) + f32(1); }, "T2");
    te::Tensor T3 = te::compute(
        {8}, [&](Var i) { return T2(i) - T1(i); }, "T3");
    PrimFunc f = te::createPrimFunc({A, T3});
    auto* root = rootBlock(f);
    QCOMPARE(root->allocBuffers.size(), size_t(2));
    QVERIFY(root->allocBuffers[0].same_as(T1->buffer));
    QVERIFY(root->allocBuffers[1].same_as(T2->buffer));
    auto realizes = innerRealizes(f);
    QCOMPARE(realizes.size(), size_t(3));
    QCOMPARE(realizes[0]->block->name, std::string("T1"));
    QCOMPARE(realizes[1]->block->name, std::string("T2"));
    QCOMPARE(realizes[2]->block->name, std::string("T3"));
    QCOMPARE(realizes[2]->block->reads.size(), size_t(2));
    QVERIFY(realizes[2]->block->reads[0].buffer.same_as(T2->buffer));
    QVERIFY(realizes[2]->block->reads[1].buffer.same_as(T1->buffer));
    QVERIFY(!realizes[0]->block->init.defined());

    // An intermediate passed as an argument becomes a parameter, not an allocation.
    PrimFunc g = te::createPrimFunc({A, T1, T3});
    QCOMPARE(rootBlock(g)->allocBuffers.size(), size_t(1));
    QVERIFY(rootBlock(g)->allocBuffers[0].same_as(T2->buffer));
    QCOMPARE(g->params.size(), size_t(3));
  }

  void repeatedComputeNamesGetSuffixes() {
    // A mean is a sum and a division, both computes named "T_mean"; blocks are found by name,
    // so the function's blocks are T_mean and T_mean_1.
    te::Tensor A = te::placeholder({8}, DataType::Float(32), "A");
    te::Tensor B = te::compute({8}, [&](Var i) { return A(i) * f32(2); }, "T_mean");
    te::Tensor C = te::compute({8}, [&](Var i) { return B(i) + f32(1); }, "T_mean");
    te::Tensor D = te::compute({8}, [&](Var i) { return C(i) + f32(1); }, "T_mean_1");
    auto realizes = innerRealizes(te::createPrimFunc({A, D}));
    QCOMPARE(realizes.size(), size_t(3));
    QCOMPARE(realizes[0]->block->name, std::string("T_mean"));
    QCOMPARE(realizes[1]->block->name, std::string("T_mean_1"));
    QCOMPARE(realizes[2]->block->name, std::string("T_mean_1_1"));
  }

  void defaultAxisNamesAndVectorForm() {
    te::Tensor A = te::placeholder({2, 3, 4, 5, 6}, DataType::Float(32), "A");
    te::Tensor B = te::compute(
        {2, 3, 4, 5, 6},
        [&](const std::vector<Var>& v) -> te::ComputeBody {
          return A({v[0], v[1], v[2], v[3], v[4]});
        },
        "B");
    auto loops = loopsAbove(rootBlock(te::createPrimFunc({A, B}))->body);
    QCOMPARE(loops.size(), size_t(5));
    for (size_t d = 0; d < 5; ++d)
      QCOMPARE(loops[d]->loopVar->name, "i" + std::to_string(d));

    te::Tensor C = te::placeholder({2, 3, 4}, DataType::Float(32), "C");
    te::Tensor D = te::compute(
        {2, 3, 4}, [&](Var i, Var j, Var k) { return C(i, j, k); }, "D");
    auto l3 = loopsAbove(rootBlock(te::createPrimFunc({C, D}))->body);
    QCOMPARE(l3[0]->loopVar->name, std::string("i"));
    QCOMPARE(l3[2]->loopVar->name, std::string("k"));

    te::Tensor E = te::compute({2, 3, 4}, [&](Var a, Var b, Var c) { return C(a, b, c); }, "E", "",
                               {}, {"n", "h", "w"});
    auto l4 = loopsAbove(rootBlock(te::createPrimFunc({C, E}))->body);
    QCOMPARE(l4[1]->loopVar->name, std::string("h"));

    // Six index variables.
    te::Tensor S = te::placeholder({1, 2, 1, 2, 1, 2}, DataType::Float(32), "S");
    te::Tensor S2 = te::compute(
        {1, 2, 1, 2, 1, 2},
        [&](Var a, Var b, Var c, Var d, Var e, Var g) { return S(a, b, c, d, e, g); }, "S2");
    QCOMPARE(loopsAbove(rootBlock(te::createPrimFunc({S, S2}))->body).size(), size_t(6));
  }

  void reducerIdentities() {
    DataType f = DataType::Float(32), i32 = DataType::Int(32);
    QCOMPARE(te::reducerIdentity(te::ReducerKind::Sum, f).as<FloatImmNode>()->value, 0.0);
    QCOMPARE(te::reducerIdentity(te::ReducerKind::Prod, f).as<FloatImmNode>()->value, 1.0);
    QVERIFY(std::isinf(te::reducerIdentity(te::ReducerKind::Max, f).as<FloatImmNode>()->value));
    QVERIFY(te::reducerIdentity(te::ReducerKind::Max, f).as<FloatImmNode>()->value < 0);
    QVERIFY(te::reducerIdentity(te::ReducerKind::Min, f).as<FloatImmNode>()->value > 0);
    QCOMPARE(*asConstInt(te::reducerIdentity(te::ReducerKind::Max, i32)), int64_t(INT32_MIN));
    QCOMPARE(*asConstInt(te::reducerIdentity(te::ReducerKind::Min, i32)), int64_t(INT32_MAX));
    QCOMPARE(*asConstInt(te::reducerIdentity(te::ReducerKind::Min, DataType::Int(8))),
             int64_t(127));
    QCOMPARE(*asConstInt(te::reducerIdentity(te::ReducerKind::Prod, i32)), int64_t(1));
  }

  void reducersBecomeInitAndUpdate() {
    te::Tensor A = te::placeholder({4, 6}, DataType::Float(32), "A");
    struct Case {
      te::Reduce (*make)(Expr, std::vector<te::IterVar>, Expr);
      BinOp op;
      double identity;
    };
    std::vector<Case> cases = {{te::sum, BinOp::Add, 0.0},
                               {te::prod, BinOp::Mul, 1.0},
                               {te::max, BinOp::Max, -INFINITY},
                               {te::min, BinOp::Min, INFINITY}};
    for (auto& c : cases) {
      te::IterVar k = te::reduceAxis(6, "k");
      te::Tensor R = te::compute(
          {4}, [&](Var i) { return c.make(A(i, k), {k}, Expr()); }, "R");
      PrimFunc f = te::createPrimFunc({A, R});
      auto realizes = innerRealizes(f);
      const BlockNode* b = realizes[0]->block.get();
      QCOMPARE(b->init.as<BufferStoreNode>()->value.as<FloatImmNode>()->value, c.identity);
      QCOMPARE(b->body.as<BufferStoreNode>()->value.as<BinaryNode>()->op, c.op);
      QCOMPARE(b->reads.size(), size_t(1)); // the update's read of R is not a read
    }
  }

  void reduceWithConditionIsGuarded() {
    te::Tensor A = te::placeholder({4, 6}, DataType::Float(32), "A");
    te::IterVar k = te::reduceAxis(6, "k");
    te::Tensor R = te::compute(
        {4}, [&](Var i) { return te::sum(A(i, k), {k}, k < i + 2); }, "R");
    PrimFunc f = te::createPrimFunc({A, R});
    auto realizes = innerRealizes(f);
    auto* guard = realizes[0]->block->body.as<IfThenElseNode>();
    QVERIFY(guard);
    QVERIFY(guard->thenCase.as<BufferStoreNode>());
    QVERIFY(realizes[0]->block->init.as<BufferStoreNode>());
  }

  void readRegionsMergeOffsets() {
    te::Tensor A = te::placeholder({10}, DataType::Float(32), "A");
    te::Tensor B = te::compute(
        {8}, [&](Var i) { return A(i) + A(i + 1) + A(i + 2); }, "B");
    auto b = innerRealizes(te::createPrimFunc({A, B}))[0]->block;
    QCOMPARE(b->reads.size(), size_t(1));
    QVERIFY(b->reads[0].region[0].min.same_as(b->iterVars[0].var));
    QVERIFY(isConstInt(b->reads[0].region[0].extent, 3));

    // Accesses that are not constant offsets of one another read the whole dimension.
    te::Tensor C = te::compute(
        {5}, [&](Var i) { return A(i) + A(i * 2); }, "C");
    auto c = innerRealizes(te::createPrimFunc({A, C}))[0]->block;
    QVERIFY(isConstInt(c->reads[0].region[0].min, 0));
    QVERIFY(isConstInt(c->reads[0].region[0].extent, 10));
  }

  void paddingPredicate() {
    te::Tensor A = te::placeholder({4}, DataType::Float(32), "A");
    te::Tensor P = te::compute(
        {6}, [&](Var i) { return ifThenElse(i >= 1 && i < 5, A(i - 1), f32(0)); }, "P");
    auto b = innerRealizes(te::createPrimFunc({A, P}))[0]->block;
    auto* call = b->body.as<BufferStoreNode>()->value.as<CallNode>();
    QVERIFY(call && call->op == "if_then_else");
    QCOMPARE(b->reads.size(), size_t(1));
  }

  void blockAnnotationsFromAttrs() {
    te::Tensor A = te::placeholder({4}, DataType::Float(32), "A");
    te::Tensor B = te::compute({4}, [&](Var i) { return A(i); }, "B", "injective",
                               {{"schedule_rule", stringImm("none")}});
    auto b = innerRealizes(te::createPrimFunc({A, B}))[0]->block;
    QVERIFY(b->annotations.count("schedule_rule"));
  }

  void errors() {
    te::Tensor A = te::placeholder({4, 4}, DataType::Float(32), "A");
    // Wrong number of indices.
    QVERIFY_THROWS_EXCEPTION(loom::ValueError, A(Expr(1)));
    // Lambda arity vs shape rank.
    try {
      te::compute(
          {4, 4}, [&](Var i) { return A(i, i); }, "X");
      QFAIL("no error");
    } catch (const loom::ValueError& e) {
      QVERIFY(std::string(e.what()).find("'X'") != std::string::npos);
    }
    // Bad shapes.
    QVERIFY_THROWS_EXCEPTION(loom::ValueError, te::placeholder({0, 4}, DataType::Float(32), "Z"));
    // A placeholder the function reads must be an argument.
    te::Tensor B = te::compute(
        {4, 4}, [&](Var i, Var j) { return A(i, j) * f32(3); }, "B");
    try {
      te::createPrimFunc({B});
      QFAIL("no error");
    } catch (const loom::ValueError& e) {
      std::string m = e.what();
      QVERIFY2(m.find("'A'") != std::string::npos && m.find("'B'") != std::string::npos, m.c_str());
    }
    QVERIFY_THROWS_EXCEPTION(loom::ValueError, te::createPrimFunc({A, B, A}));
    QVERIFY_THROWS_EXCEPTION(loom::ValueError, te::createPrimFunc({}));
    // A spatial axis is not a reduction axis.
    QVERIFY_THROWS_EXCEPTION(
        loom::ValueError,
        te::sum(A(0, 0), {te::IterVar(makeVar("s"), Range(0, 4), IterType::DataPar)}));
    QVERIFY_THROWS_EXCEPTION(loom::ValueError, te::sum(A(0, 0), {}));
  }

  void freshVariablesPerFunction() {
    te::Tensor A = te::placeholder({4}, DataType::Float(32), "A");
    te::Tensor B = te::compute(
        {4}, [&](Var i) { return A(i) + f32(1); }, "B");
    PrimFunc f = te::createPrimFunc({A, B}), g = te::createPrimFunc({A, B});
    QVERIFY(structuralEqual(f, g));
    auto bf = innerRealizes(f)[0]->block, bg = innerRealizes(g)[0]->block;
    QVERIFY(!bf->iterVars[0].var.same_as(bg->iterVars[0].var));
  }
};

QTEST_APPLESS_MAIN(TestCreatePrimFunc)
#include "test_create_prim_func.moc"
