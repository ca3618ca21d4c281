// The reference interpreter on hand-built programs, checked against plain C++ references.
#include <QtTest>

#include <cmath>
#include <limits>

#include "Builders.h"
#include "core/tir/Parser.h"
#include "Harness.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;
using runtime::NDArray;

namespace {
const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

float at2(const NDArray& a, int64_t i, int64_t j) { return a.as<float>()[i * a.shape()[1] + j]; }

Stmt loop(Var v, Expr extent, Stmt body, ForKind k = ForKind::Serial) { return forLoop(v, 0, extent, k, body); }

/// B[i] = sum_{k < 10} A[i, k], with k split 3 x 4 and the overhang masked by the block predicate.
PrimFunc rowSum(bool withPredicate) {
  Buffer A = makeBuffer("A", f32, {5, 10}), B = makeBuffer("B", f32, {5});
  Var i = makeVar("i"), ko = makeVar("ko"), ki = makeVar("ki"), vi = makeVar("vi"), vk = makeVar("vk");
  Block blk = makeBlock("sum", {IterVar(vi, Range(0, 5), IterType::DataPar), IterVar(vk, Range(0, 10), IterType::CommReduce)},
                        {BufferRegion(A, {Range(vi, 1), Range(0, 10)})}, {BufferRegion(B, {Range(vi, 1)})},
                        bufferStore(B, bufferLoad(B, {vi}) + bufferLoad(A, {vi, vk}), {vi}),
                        bufferStore(B, floatImm(f32, 0), {vi}));
  Expr k = Expr(ko) * 4 + ki;
  Stmt body = loop(i, 5, loop(ko, 3, loop(ki, 4, blockRealize({i, k}, withPredicate ? k < 10 : Expr(), blk))));
  return makePrimFunc("row_sum", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
}

/// Row-wise softmax in block form with intermediate buffers allocated by a root block.
PrimFunc softmax(int R, int C) {
  Buffer A = makeBuffer("A", f32, {R, C}), B = makeBuffer("B", f32, {R, C});
  Buffer mx = makeBuffer("maxv", f32, {R}), ex = makeBuffer("expv", f32, {R, C}), sm = makeBuffer("sumv", f32, {R});
  auto nest = [&](const char* name, bool reduceJ, std::function<Stmt(Var, Var)> body, std::function<Stmt(Var)> init) {
    Var i = makeVar("i"), j = makeVar("j"), vi = makeVar("vi"), vj = makeVar("vj");
    Block b = makeBlock(name, {IterVar(vi, Range(0, R), IterType::DataPar),
                               IterVar(vj, Range(0, C), reduceJ ? IterType::CommReduce : IterType::DataPar)},
                        {}, {}, body(vi, vj), init ? init(vi) : Stmt());
    return loop(i, R, loop(j, C, blockRealize({i, j}, Expr(), b)));
  };
  Stmt s1 = nest("max", true,
                 [&](Var vi, Var vj) { return bufferStore(mx, max(bufferLoad(mx, {vi}), bufferLoad(A, {vi, vj})), {vi}); },
                 [&](Var vi) { return bufferStore(mx, floatImm(f32, -std::numeric_limits<double>::infinity()), {vi}); });
  Stmt s2 = nest("exp", false, [&](Var vi, Var vj) {
    return bufferStore(ex, call("exp", {bufferLoad(A, {vi, vj}) - bufferLoad(mx, {vi})}), {vi, vj});
  }, nullptr);
  Stmt s3 = nest("sum", true,
                 [&](Var vi, Var vj) { return bufferStore(sm, bufferLoad(sm, {vi}) + bufferLoad(ex, {vi, vj}), {vi}); },
                 [&](Var vi) { return bufferStore(sm, floatImm(f32, 0), {vi}); });
  Stmt s4 = nest("norm", false, [&](Var vi, Var vj) {
    return bufferStore(B, bufferLoad(ex, {vi, vj}) / bufferLoad(sm, {vi}), {vi, vj});
  }, nullptr);
  Block root = makeBlock("root", {}, {}, {}, seq({s1, s2, s3, s4}), Stmt(), {mx, ex, sm});
  return makePrimFunc("softmax", {A->data, B->data}, {{A->data, A}, {B->data, B}}, blockRealize({}, Expr(), root));
}

/// A view of `base`'s memory with its own shape / strides / offset.
Buffer view(const Buffer& base, const char* name, std::vector<Expr> shape, std::vector<Expr> strides = {},
            Expr offset = Expr()) {
  Buffer b = makeBuffer(name, base->dtype, std::move(shape));
  auto* n = const_cast<BufferNode*>(b.get());
  n->data = base->data;
  n->strides = std::move(strides);
  if (offset.defined()) n->elemOffset = offset;
  return b;
}
}  // namespace

class TestInterpreter : public QObject {
  Q_OBJECT
private slots:
  void matmulBlockWithInit() {
    const int N = 16, M = 12, K = 8;
    PrimFunc f = matmul(N, M, K);
    NDArray A = randomArray({N, K}, 1), B = randomArray({K, M}, 2), C = randomArray({N, M}, 3);
    interpret(f, {A, B, C});
    NDArray want = array({N, M});
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < M; ++j) {
        float acc = 0;
        for (int k = 0; k < K; ++k) acc = acc + at2(A, i, k) * at2(B, k, j);
        want.as<float>()[i * M + j] = acc;
      }
    QVERIFY2(mismatchReport(C, want, 0, 0).empty(), mismatchReport(C, want, 0, 0).c_str());
    // The init statement resets C: garbage in gives the same result.
    NDArray C2 = randomArray({N, M}, 99);
    interpret(f, {A, B, C2});
    QCOMPARE(maxRelError(C2, want), 0.0);
  }

  void matmulOtherDtypes() {
    PrimFunc f = matmul(4, 5, 6, DataType::Float(64));
    NDArray A = randomArray({4, 6}, 4, DataType::Float(64)), B = randomArray({6, 5}, 5, DataType::Float(64));
    NDArray C = array({4, 5}, DataType::Float(64));
    interpret(f, {A, B, C});
    double want = 0;
    for (int k = 0; k < 6; ++k) want += A.as<double>()[2 * 6 + k] * B.as<double>()[k * 5 + 3];
    QCOMPARE(C.as<double>()[2 * 5 + 3], want);
    PrimFunc g = matmul(3, 3, 3, DataType::Int(8));
    NDArray a = array({3, 3}, DataType::Int(8)), b = array({3, 3}, DataType::Int(8)), c = array({3, 3}, DataType::Int(8));
    for (int i = 0; i < 9; ++i) a.as<int8_t>()[i] = b.as<int8_t>()[i] = 10;
    interpret(g, {a, b, c});
    QCOMPARE(int(c.as<int8_t>()[4]), int(int8_t(uint8_t(300))));  // 3 * 100 wraps in int8
  }

  void symbolicShapes() {
    Var n = makeVar("n");
    Buffer A = makeBuffer("A", f32, {n, 4}), B = makeBuffer("B", f32, {n * 4});
    Var i = makeVar("i"), j = makeVar("j");
    Stmt body = loop(i, n, loop(j, 4, bufferStore(B, bufferLoad(A, {i, j}) + cast(f32, Expr(n)), {Expr(i) * 4 + j})));
    PrimFunc f = makePrimFunc("flat", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
    NDArray a = randomArray({3, 4}, 7), b = array({12});
    interpret(f, {a, b});
    for (int k = 0; k < 12; ++k) QCOMPARE(b.as<float>()[k], a.as<float>()[k] + 3.0f);
    QString err = runtimeErrorOf([&] { interpret(f, {a, array({11})}); });
    QVERIFY2(err.contains("'B'") && err.contains("11") && err.contains("12"), qPrintable(err));
  }

  void symbolicStridesOffsetAndHandleLets() {
    // A param buffer with symbolic strides and elem_offset: bound from the compact array.
    Var n = makeVar("n"), s0 = makeVar("s0"), off = makeVar("off");
    Buffer A = makeBuffer("A", f32, {n, 4});
    auto* an = const_cast<BufferNode*>(A.get());
    an->strides = {Expr(s0), Expr(1)};
    an->elemOffset = off;
    Buffer B = makeBuffer("B", f32, {n, 4});
    // B is written through a LetStmt-bound alias of its data pointer.
    Var alias = makeVar("alias", DataType::Handle());
    Buffer Bv = view(B, "Bv", {Expr(n) * 4});
    const_cast<BufferNode*>(Bv.get())->data = alias;
    Var i = makeVar("i"), j = makeVar("j");
    Stmt body = letStmt(alias, B->data, declBuffer(Bv, loop(i, n, loop(j, 4,
        bufferStore(Bv, bufferLoad(A, {i, j}) * cast(f32, Expr(s0)) + cast(f32, Expr(off)), {Expr(i) * 4 + j})))));
    PrimFunc f = makePrimFunc("strided", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
    NDArray a = randomArray({3, 4}, 8), b = array({3, 4});
    interpret(f, {a, b});
    for (int k = 0; k < 12; ++k) QCOMPARE(b.as<float>()[k], a.as<float>()[k] * 4.0f);
  }

  void reductionWithPredicate() {
    NDArray A = randomArray({5, 10}, 11), B = randomArray({5}, 12);
    interpret(rowSum(true), {A, B});
    for (int i = 0; i < 5; ++i) {
      float acc = 0;
      for (int k = 0; k < 10; ++k) acc = acc + at2(A, i, k);
      QCOMPARE(B.as<float>()[i], acc);
    }
    // Without the predicate the overhang reads past the end of A.
    QString err = runtimeErrorOf([&] { interpret(rowSum(false), {A, B}); });
    QVERIFY2(err.contains("out-of-bounds") && err.contains("buffer A"), qPrintable(err));
  }

  void initAtDomainMin() {
    // The reduce iter var's domain starts at 2: init runs when vk == 2, not 0.
    Buffer A = makeBuffer("A", f32, {6}), B = makeBuffer("B", f32, {1});
    Var k = makeVar("k"), vk = makeVar("vk");
    Block blk = makeBlock("s", {IterVar(vk, Range(2, 4), IterType::CommReduce)}, {}, {},
                          bufferStore(B, bufferLoad(B, {0}) + bufferLoad(A, {vk}), {0}),
                          bufferStore(B, floatImm(f32, 100), {0}));
    PrimFunc f = makePrimFunc("f", {A->data, B->data}, {{A->data, A}, {B->data, B}},
                              forLoop(k, 2, 4, ForKind::Serial, blockRealize({k}, Expr(), blk)));
    NDArray a = array({6}), b = array({1});
    for (int t = 0; t < 6; ++t) a.as<float>()[t] = float(t);
    interpret(f, {a, b});
    QCOMPARE(b.as<float>()[0], 100.0f + 2 + 3 + 4 + 5);
  }

  void softmaxWithExpAndMax() {
    const int R = 4, C = 10;
    NDArray A = randomArray({R, C}, 21), B = array({R, C});
    for (int j = 0; j < C; ++j) A.as<float>()[2 * C + j] *= 30.0f;  // a row with large values
    interpret(softmax(R, C), {A, B});
    NDArray want = array({R, C});
    for (int i = 0; i < R; ++i) {
      float m = -std::numeric_limits<float>::infinity();
      for (int j = 0; j < C; ++j) m = at2(A, i, j) > m ? at2(A, i, j) : m;
      float e[C], s = 0;
      for (int j = 0; j < C; ++j) e[j] = float(std::exp(double(at2(A, i, j) - m)));
      for (int j = 0; j < C; ++j) s = s + e[j];
      for (int j = 0; j < C; ++j) want.as<float>()[i * C + j] = e[j] / s;
    }
    QVERIFY2(mismatchReport(B, want, 0, 0).empty(), mismatchReport(B, want, 0, 0).c_str());
    float rowSum = 0;
    for (int j = 0; j < C; ++j) rowSum += at2(B, 2, j);
    QVERIFY(std::fabs(rowSum - 1.0f) < 1e-5f);
  }

  void loweredFlattenedWithAllocate() {
    Buffer A = makeBuffer("A", f32, {4, 8}), B = makeBuffer("B", f32, {4, 8});
    Buffer Af = view(A, "A_flat", {32}), Bf = view(B, "B_flat", {32});
    Var tv = makeVar("T", DataType::Handle());
    Buffer T = makeBuffer("T", f32, {32});
    const_cast<BufferNode*>(T.get())->data = tv;
    Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k");
    Stmt body = declBuffer(
        Af, declBuffer(Bf, allocate(tv, f32, {32}, declBuffer(T, seq({
            loop(k, 32, bufferStore(T, bufferLoad(Af, {k}) * floatImm(f32, 2), {k})),
            loop(i, 4, loop(j, 8, bufferStore(Bf, bufferLoad(T, {Expr(i) * 8 + j}) + floatImm(f32, 1),
                                              {Expr(i) * 8 + j}))),
        })))));
    PrimFunc f = makePrimFunc("lowered", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
    NDArray a = randomArray({4, 8}, 31), b = array({4, 8});
    interpret(f, {a, b});
    for (int t = 0; t < 32; ++t) QCOMPARE(b.as<float>()[t], a.as<float>()[t] * 2.0f + 1.0f);
    // The temporary is sized by its Allocate: one element more is out of bounds.
    Stmt bad = allocate(tv, f32, {32}, declBuffer(T, loop(k, 33, bufferStore(T, floatImm(f32, 0), {k}))));
    QString err = runtimeErrorOf([&] { interpret(makePrimFunc("bad", {}, {}, bad), {}); });
    QVERIFY2(err.contains("out-of-bounds store") && err.contains("buffer T") && err.contains("[32]"), qPrintable(err));
  }

  void viewsWithOffsetAndStrides() {
    Buffer A = makeBuffer("A", f32, {4, 8}), At = makeBuffer("At", f32, {8, 4});
    Buffer row1 = view(A, "row1", {8}, {}, Expr(8));
    Buffer trans = view(A, "trans", {8, 4}, {Expr(1), Expr(8)});
    Var i = makeVar("i"), j = makeVar("j");
    Stmt body = seq({
        loop(i, 8, loop(j, 4, bufferStore(At, bufferLoad(trans, {i, j}), {i, j}))),
        declBuffer(row1, loop(j, 8, bufferStore(row1, floatImm(f32, -5), {j}))),
    });
    PrimFunc f = makePrimFunc("views", {A->data, At->data}, {{A->data, A}, {At->data, At}}, body);
    NDArray a = randomArray({4, 8}, 41), at = array({8, 4});
    NDArray orig = a.copy();
    interpret(f, {a, at});
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 8; ++c) {
        QCOMPARE(at2(at, c, r), at2(orig, r, c));
        QCOMPARE(at2(a, r, c), r == 1 ? -5.0f : at2(orig, r, c));  // the view aliases the param
      }
  }

  void vectorCode() {
    Buffer A = makeBuffer("A", f32, {32}), B = makeBuffer("B", f32, {32}), G = makeBuffer("G", f32, {4});
    Buffer R = makeBuffer("R", f32, {32}), I = makeBuffer("I", DataType::Int(8), {8});
    Var x = makeVar("x", f32), i = makeVar("i");
    Expr lanes8 = ramp(Expr(i) * 8, 1, 8);
    Expr all = ramp(0, 1, 32);
    Expr a32 = bufferLoad(A, {all});
    Stmt body = seq({
        loop(i, 4, bufferStore(B, bufferLoad(A, {lanes8}) * broadcast(floatImm(f32, 2), 8) + broadcast(x, 8), {lanes8}),
             ForKind::Vectorized),
        bufferStore(G, bufferLoad(A, {ramp(1, 3, 4)}), {ramp(0, 1, 4)}),
        bufferStore(R, select(a32 > broadcast(floatImm(f32, 0), 32), a32, broadcast(floatImm(f32, 0), 32)), {all}),
        bufferStore(I, ramp(intImm(DataType::Int(8), 120), intImm(DataType::Int(8), 2), 8), {ramp(0, 1, 8)}),
    });
    PrimFunc f = makePrimFunc("vec", {A->data, B->data, G->data, R->data, I->data, x},
                              {{A->data, A}, {B->data, B}, {G->data, G}, {R->data, R}, {I->data, I}}, body);
    NDArray a = randomArray({32}, 51), b = array({32}), g = array({4}), r = array({32}), iv = array({8}, DataType::Int(8));
    interpret(f, {a, b, g, r, iv, 0.25});
    for (int t = 0; t < 32; ++t) {
      QCOMPARE(b.as<float>()[t], a.as<float>()[t] * 2.0f + 0.25f);
      QCOMPARE(r.as<float>()[t], std::max(a.as<float>()[t], 0.0f));
    }
    for (int t = 0; t < 4; ++t) QCOMPARE(g.as<float>()[t], a.as<float>()[1 + 3 * t]);
    const int wantI[8] = {120, 122, 124, 126, -128, -126, -124, -122};
    for (int t = 0; t < 8; ++t) QCOMPARE(int(iv.as<int8_t>()[t]), wantI[t]);
    // A vector access whose last lane overruns names the lane.
    Stmt over = bufferStore(G, bufferLoad(A, {ramp(20, 4, 4)}), {ramp(0, 1, 4)});
    QString err = runtimeErrorOf([&] {
      interpret(makePrimFunc("o", {A->data, G->data}, {{A->data, A}, {G->data, G}}, over), {a, g});
    });
    QVERIFY2(err.contains("[32]") && err.contains("lane 3") && err.contains("buffer A"), qPrintable(err));
  }

  void vectorElementBuffers() {
    // A buffer of float32x4 elements: a scalar index moves a whole vector.
    const DataType v4 = DataType::Float(32, 4);
    Buffer A = makeBuffer("A", v4, {2}), B = makeBuffer("B", v4, {2});
    Stmt body = seq({bufferStore(B, bufferLoad(A, {1}) + broadcast(floatImm(f32, 1), 4), {0}),
                     bufferStore(B, ifThenElse(ramp(0, 1, 4) < broadcast(2, 4), bufferLoad(A, {0}),
                                               broadcast(floatImm(f32, -1), 4)), {1})});
    PrimFunc f = makePrimFunc("v", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
    NDArray a = randomArray({2}, 61, v4), b = array({2}, v4);
    interpret(f, {a, b});
    for (int l = 0; l < 4; ++l) {
      QCOMPARE(b.as<float>()[l], a.as<float>()[4 + l] + 1.0f);
      QCOMPARE(b.as<float>()[4 + l], l < 2 ? a.as<float>()[l] : -1.0f);
    }
    QString err = runtimeErrorOf([&] { interpret(f, {a, array({2}, f32)}); });
    QVERIFY2(err.contains("'B'") && err.contains("float32x4"), qPrintable(err));
  }

  void controlFlowAndBindings() {
    // gcd by a while loop over an allocated two-element state, under Let / LetStmt / If / Attr / Assert.
    Buffer out = makeBuffer("out", i32, {3});
    Var a = makeVar("a"), b = makeVar("b"), sv = makeVar("state", DataType::Handle()), t = makeVar("t");
    Buffer S = makeBuffer("S", i32, {2});
    const_cast<BufferNode*>(S.get())->data = sv;
    Expr s0 = bufferLoad(S, {0}), s1 = bufferLoad(S, {1});
    Stmt gcd = allocate(sv, i32, {2}, declBuffer(S, seq({
        bufferStore(S, a, {0}), bufferStore(S, b, {1}),
        whileLoop(ne(s1, 0), letStmt(t, s1, seq({bufferStore(S, truncmod(s0, t), {1}), bufferStore(S, t, {0})}))),
        bufferStore(out, s0, {0}),
    })));
    Var u = makeVar("u");
    Stmt rest = seq({
        ifThen(Expr(a) > b, bufferStore(out, 1, {1}), bufferStore(out, 2, {1})),
        attrStmt(Expr(a), "pragma_anything", 7, bufferStore(out, let(u, Expr(a) * 10, Expr(u) + u), {2})),
    });
    PrimFunc f = makePrimFunc("gcd", {a, b, out->data}, {{out->data, out}},
                              assertStmt(Expr(b) > 0, "b must be positive", seq({gcd, rest})));
    NDArray o = array({3}, i32);
    interpret(f, {int64_t(84), int64_t(36), o});
    QCOMPARE(o.as<int32_t>()[0], 12);
    QCOMPARE(o.as<int32_t>()[1], 1);
    QCOMPARE(o.as<int32_t>()[2], 1680);
    interpret(f, {int64_t(5), int64_t(35), o});
    QCOMPARE(o.as<int32_t>()[0], 5);
    QCOMPARE(o.as<int32_t>()[1], 2);
  }

  void everyLoopKindRunsInOrder() {
    // out[k] = order of visit: the loop of every kind runs sequentially, min to min + extent.
    for (ForKind kind : {ForKind::Serial, ForKind::Parallel, ForKind::Vectorized, ForKind::Unrolled,
                         ForKind::ThreadBinding}) {
      Buffer out = makeBuffer("out", i32, {6}), cnt = makeBuffer("cnt", i32, {1});
      Var i = makeVar("i");
      Stmt body = seq({bufferStore(cnt, 0, {0}),
                       forLoop(i, 2, 4, kind,
                               seq({bufferStore(out, bufferLoad(cnt, {0}), {i}),
                                    bufferStore(cnt, bufferLoad(cnt, {0}) + 1, {0})}),
                               kind == ForKind::ThreadBinding ? "threadIdx.x" : "")});
      PrimFunc f = makePrimFunc("k", {out->data, cnt->data}, {{out->data, out}, {cnt->data, cnt}}, body);
      NDArray o = array({6}, i32), c = array({1}, i32);
      interpret(f, {o, c});
      QCOMPARE(o.as<int32_t>()[1], 0);
      for (int t = 2; t < 6; ++t) QCOMPARE(o.as<int32_t>()[t], t - 2);
      QCOMPARE(c.as<int32_t>()[0], 4);
    }
  }

  void uninitializedMemoryIsPoisoned() {
    Buffer out = makeBuffer("out", f32, {1});
    Var tv = makeVar("T", DataType::Handle());
    Buffer T = makeBuffer("T", f32, {4});
    const_cast<BufferNode*>(T.get())->data = tv;
    PrimFunc f = makePrimFunc("p", {out->data}, {{out->data, out}},
                              allocate(tv, f32, {4}, declBuffer(T, bufferStore(out, bufferLoad(T, {2}), {0}))));
    NDArray o = array({1});
    interpret(f, {o});
    QVERIFY(std::isnan(o.as<float>()[0]));
  }

  void argumentErrors() {
    PrimFunc f = matmul(4, 4, 4);
    NDArray A = array({4, 4}), B = array({4, 4}), C = array({4, 4});
    QString e1 = runtimeErrorOf([&] { interpret(f, {A, B}); });
    QVERIFY2(e1.contains("3 arguments") && e1.contains("got 2"), qPrintable(e1));
    QString e2 = runtimeErrorOf([&] { interpret(f, {A, array({4, 4}, DataType::Float(64)), C}); });
    QVERIFY2(e2.contains("'B'") && e2.contains("float64") && e2.contains("float32"), qPrintable(e2));
    QString e3 = runtimeErrorOf([&] { interpret(f, {A, B, array({4, 5})}); });
    QVERIFY2(e3.contains("'C'") && e3.contains("dimension 1") && e3.contains("5"), qPrintable(e3));
    QString e4 = runtimeErrorOf([&] { interpret(f, {A, B, array({16})}); });
    QVERIFY2(e4.contains("'C'") && e4.contains("2 dimensions"), qPrintable(e4));
    QString e5 = runtimeErrorOf([&] { interpret(f, {A, int64_t(3), C}); });
    QVERIFY2(e5.contains("'B'") && e5.contains("NDArray"), qPrintable(e5));
    Var n = makeVar("n");
    Buffer o = makeBuffer("o", i32, {1});
    PrimFunc g = makePrimFunc("g", {n, o->data}, {{o->data, o}}, bufferStore(o, n, {0}));
    QString e6 = runtimeErrorOf([&] { interpret(g, {A, array({1}, i32)}); });
    QVERIFY2(e6.contains("'n'") && e6.contains("scalar"), qPrintable(e6));
    QString e7 = runtimeErrorOf([&] { interpret(g, {2.5, array({1}, i32)}); });
    QVERIFY2(e7.contains("'n'") && e7.contains("integer"), qPrintable(e7));
    // Two buffers sharing the symbolic n must agree.
    Buffer P = makeBuffer("P", f32, {n}), Q = makeBuffer("Q", f32, {n});
    PrimFunc h = makePrimFunc("h", {P->data, Q->data}, {{P->data, P}, {Q->data, Q}}, evaluate(0));
    interpret(h, {array({3}), array({3})});
    QString e8 = runtimeErrorOf([&] { interpret(h, {array({3}), array({4})}); });
    QVERIFY2(e8.contains("'Q'") && e8.contains("4") && e8.contains("expected 3"), qPrintable(e8));
  }

  void runtimeErrors() {
    Buffer A = makeBuffer("A", f32, {4, 4});
    Var i = makeVar("i");
    PrimFunc oob = makePrimFunc("oob", {A->data}, {{A->data, A}},
                                loop(i, 5, bufferStore(A, bufferLoad(A, {i, 0}), {0, 0})));
    QString e1 = runtimeErrorOf([&] { interpret(oob, {array({4, 4})}); });
    QVERIFY2(e1.contains("out-of-bounds load") && e1.contains("buffer A") && e1.contains("[4, 0]") &&
                 e1.contains("[4, 4]"),
             qPrintable(e1));
    PrimFunc neg = makePrimFunc("neg", {A->data}, {{A->data, A}}, bufferStore(A, floatImm(f32, 1), {0, -1}));
    QString e2 = runtimeErrorOf([&] { interpret(neg, {array({4, 4})}); });
    QVERIFY2(e2.contains("out-of-bounds store") && e2.contains("[0, -1]"), qPrintable(e2));
    PrimFunc as = makePrimFunc("as", {A->data}, {{A->data, A}},
                               assertStmt(bufferLoad(A, {0, 0}) > floatImm(f32, 0), "A[0, 0] must be positive",
                                          evaluate(0)));
    QString e3 = runtimeErrorOf([&] { interpret(as, {array({4, 4})}); });
    QVERIFY2(e3.contains("A[0, 0] must be positive"), qPrintable(e3));
    Var x = makeVar("x"), y = makeVar("y");
    for (auto op : {BinOp::Div, BinOp::Mod, BinOp::FloorDiv, BinOp::FloorMod}) {
      QString e4 = runtimeErrorOf([&] { runExpr(binary(op, x, y), {x, y}, {int64_t(7), int64_t(0)}); });
      QVERIFY2(e4.contains("division by zero"), qPrintable(e4));
    }
    Var z = makeVar("z");
    QString e5 = runtimeErrorOf([&] { runExpr(Expr(z) + 1); });
    QVERIFY2(e5.contains("'z'") && e5.contains("not bound"), qPrintable(e5));
    QString e6 = runtimeErrorOf([&] { runExpr(call(f32, "no_such_intrinsic", {floatImm(f32, 1)})); });
    QVERIFY2(e6.contains("no_such_intrinsic"), qPrintable(e6));
    // Float division by zero is IEEE, not an error.
    Var fx = makeVar("fx", f32);
    NDArray r = runExpr(Expr(fx) / floatImm(f32, 0), {fx}, {1.0});
    QVERIFY(std::isinf(r.as<float>()[0]));
  }

  void runtimeErrorsAreLocated() {
    // A parsed program's run-time failure carries the failing statement's line:col (the CLI
    // prints FILE:LINE:COL: error: ...); the message itself is unchanged.
    PrimFunc f = parseFunc("@T.prim_func\n"
                           "def main(A: T.Buffer((4,), \"float32\")):\n"
                           "    for i in range(4):\n"
                           "        A[i] = T.float32(1)\n"
                           "    for i in range(4):\n"
                           "        A[i + 1] = A[i]\n",
                           "oob.tir");
    try {
      interpret(f, {array({4})});
      QFAIL("expected an out-of-bounds store");
    } catch (const RuntimeError& e) {
      QVERIFY2(QString(e.what()).startsWith("out-of-bounds store of buffer A"), e.what());
      QCOMPARE(e.span().line, 6);
      QCOMPARE(e.span().column, 9);
      QVERIFY2(QString::fromStdString(e.formatted()).startsWith("oob.tir:6:9: error: out-of-bounds store"),
               e.formatted().c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestInterpreter)
#include "test_interpreter.moc"
