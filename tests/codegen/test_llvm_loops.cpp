// LLVM codegen of lowered loops (vector, masked tail, reduction, matmul, parallel, unrolled,
// allocations, conditionals), checked against the interpreter and plain C++ on random inputs.
#include <QtTest>

#include <cmath>
#include <sstream>
#include <random>

#include "CodegenTestUtil.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/ThreadPool.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::codegen;
using loom::runtime::NDArray;

namespace {
const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

NDArray randomArray(std::vector<int64_t> shape, uint64_t seed, runtime::DType t = runtime::DType::f32()) {
  NDArray a = NDArray::empty(std::move(shape), t);
  fillRandom(a, seed);
  return a;
}

/// Runs `f` in the interpreter and through the JIT on copies of `inputs`; returns the
/// mismatch report of every array (empty when all agree).
std::string compareWithInterpreter(const PrimFunc& f, const std::vector<tir::Arg>& inputs, double rtol = 1e-5,
                                   const std::string& target = "llvm") {
  std::vector<tir::Arg> ref, got;
  std::vector<runtime::PackedArg> packedArgs;
  for (auto& a : inputs) {
    if (auto* arr = std::get_if<NDArray>(&a)) {
      ref.push_back(arr->copy());
      NDArray c = arr->copy();
      got.push_back(c);
      packedArgs.push_back(c);
    } else if (auto* i = std::get_if<int64_t>(&a)) {
      ref.push_back(*i);
      got.push_back(*i);
      packedArgs.push_back(*i);
    } else {
      double d = std::get<double>(a);
      ref.push_back(d);
      got.push_back(d);
      packedArgs.push_back(d);
    }
  }
  interpret(f, ref);
  runtime::PackedFunc fn = codegen::testutil::jitPacked(f, target);
  fn.call(packedArgs);
  std::string report;
  for (size_t i = 0; i < ref.size(); ++i)
    if (auto* r = std::get_if<NDArray>(&ref[i])) {
      std::string m = mismatchReport(std::get<NDArray>(got[i]), *r, rtol, 1e-6);
      if (!m.empty()) report += "argument " + std::to_string(i) + ": " + m + "\n";
    }
  return report;
}

/// A 1-D view named `name` of `n` elements over a fresh handle param.
Buffer buf1d(const std::string& name, Expr n, DataType t = f32) { return makeBuffer(name, t, {std::move(n)}); }

PrimFunc func(const std::string& name, std::vector<Buffer> bufs, std::vector<Var> scalars, Stmt body) {
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> map;
  for (auto& b : bufs) {
    params.push_back(b->data);
    map.emplace_back(b->data, b);
  }
  for (auto& s : scalars) params.push_back(s);
  return makePrimFunc(name, params, map, body);
}

/// C = A @ B (M x K times K x N), row-major, the inner j loop vectorized by `lanes` with a masked
/// tail, i parallel when `parallel`.
PrimFunc matmulVectorized(int M, int N, int K, int lanes, bool parallel) {
  Buffer A = buf1d("A", M * K), B = buf1d("B", K * N), C = buf1d("C", M * N);
  Var i = makeVar("i"), jo = makeVar("jo"), k = makeVar("k");
  int full = N / lanes, tail = N % lanes;
  auto vecBody = [&](Expr j0, Expr mask) {
    Expr cIdx = ramp(i * N + j0, 1, lanes);
    Expr bIdx = ramp(k * N + j0, 1, lanes);
    Expr bLoad = bufferLoad(B, {bIdx});
    Expr cLoad = bufferLoad(C, {cIdx});
    if (mask.defined()) {
      bLoad = ifThenElse(mask, bLoad, broadcast(floatImm(f32, 0), lanes));
      cLoad = ifThenElse(mask, cLoad, broadcast(floatImm(f32, 0), lanes));
    }
    Stmt init = bufferStore(C, broadcast(floatImm(f32, 0), lanes), {cIdx});
    Stmt update = bufferStore(C, cLoad + broadcast(bufferLoad(A, {i * K + k}), lanes) * bLoad, {cIdx});
    if (mask.defined()) {
      init = ifThen(mask, init);
      update = ifThen(mask, update);
    }
    return seq({init, forLoop(k, 0, K, ForKind::Serial, update)});
  };
  std::vector<Stmt> rows;
  if (full > 0) rows.push_back(forLoop(jo, 0, full, ForKind::Serial, vecBody(jo * lanes, Expr())));
  if (tail > 0) {
    Expr j0 = intImm(i32, full * lanes);
    Expr mask = ramp(j0, 1, lanes) < broadcast(intImm(i32, N), lanes);
    rows.push_back(vecBody(j0, mask));
  }
  Stmt body = forLoop(i, 0, M, parallel ? ForKind::Parallel : ForKind::Serial, seq(rows));
  return func("matmul", {A, B, C}, {}, body);
}

void matmulRef(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
}  // namespace

class TestLLVMLoops : public QObject {
  Q_OBJECT
private slots:
  void elementwiseSymbolic() {
    Var n = makeVar("n");
    Buffer A = buf1d("A", n), B = buf1d("B", n), C = buf1d("C", n);
    Var i = makeVar("i");
    Stmt body = forLoop(i, 0, n, ForKind::Serial,
                        bufferStore(C, bufferLoad(A, {i}) * floatImm(f32, 2) - bufferLoad(B, {i}), {i}));
    PrimFunc f = func("main", {A, B, C}, {}, body);
    for (int64_t len : {1, 7, 64, 1000}) {
      std::string r = compareWithInterpreter(f, {randomArray({len}, 1), randomArray({len}, 2), randomArray({len}, 3)});
      QVERIFY2(r.empty(), r.c_str());
    }
  }

  void vectorWithMaskedTail() {
    // C[i] = exp(A[i]) + B[i] in vectors of 16, the last partial vector masked.
    Var n = makeVar("n");
    Buffer A = buf1d("A", n), B = buf1d("B", n), C = buf1d("C", n);
    Var io = makeVar("io");
    int L = 16;
    Expr idx = ramp(io * L, 1, L);
    Expr mask = idx < broadcast(n, L);
    Expr zero = broadcast(floatImm(f32, 0), L);
    Expr value = call("exp", {ifThenElse(mask, bufferLoad(A, {idx}), zero)}) + ifThenElse(mask, bufferLoad(B, {idx}), zero);
    Stmt body = forLoop(io, 0, floordiv(n + (L - 1), L), ForKind::Serial, ifThen(mask, bufferStore(C, value, {idx})));
    PrimFunc f = func("main", {A, B, C}, {}, body);
    // The interpreter has no lane-masked stores, so plain C++ is the reference here.
    runtime::PackedFunc fn = codegen::testutil::jitPacked(f);
    for (int64_t len : {5, 16, 37, 250}) {
      NDArray a = randomArray({len}, 4), b = randomArray({len}, 5), c = randomArray({len}, 6);
      fn(a, b, c);
      for (int64_t k = 0; k < len; ++k) {
        float want = std::exp(a.as<float>()[k]) + b.as<float>()[k];
        QVERIFY(std::abs(c.as<float>()[k] - want) <= 1e-6f * std::abs(want) + 1e-7f);
      }
    }
    // The masked tail neither reads nor writes past n: n = 33 on 33-element arrays whose last
    // vector spans 48 elements runs cleanly, and each element is right.
    NDArray a33 = randomArray({33}, 8), b33 = randomArray({33}, 9), c33 = NDArray::empty({33}, runtime::DType::f32());
    fn(a33, b33, c33);
    for (int k = 0; k < 33; ++k)
      QVERIFY(std::abs(c33.as<float>()[k] - (std::exp(a33.as<float>()[k]) + b33.as<float>()[k])) < 1e-5);
    std::string ir = buildLLVM({transform::makePackedAPI(f)}, Target::parse("llvm")).llvmIR();
    QVERIFY(ir.find("llvm.masked.store") != std::string::npos);
    QVERIFY(ir.find("llvm.masked.load") != std::string::npos);
  }

  void guardedVectorOfAStackBufferIsBlended() {
    // out[i, c] = sum_k x[i, k] * w[k, c] over a symbolic n columns, each 16-column chunk summed
    // in a 16-float local accumulator (a dynamic attention's scores). In the partial last chunk
    // the accumulator's accesses are guarded lane by lane; on a stack buffer that holds the whole
    // vector they are full loads and stores with a blend (SROA keeps it in a register), where
    // masked ones kept it in memory, a masked store per step of the reduction. The guarded
    // global loads and the write-back stay masked (they may not touch memory past n).
    Var n = makeVar("n");
    const int K = 8, L = 16;
    Buffer X = buf1d("X", K), W = buf1d("W", n * K), Out = buf1d("Out", n);
    Buffer A = makeBuffer("acc", f32, {Expr(intImm(i32, L))}, "local");
    Var c0 = makeVar("c0"), k = makeVar("k");
    Expr lanes = ramp(c0 * L, 1, L);
    Expr mask = lanes < broadcast(n, L);
    Expr zero = broadcast(floatImm(f32, 0), L);
    Expr accIdx = ramp(intImm(i32, 0), 1, L);
    Stmt init = ifThen(mask, bufferStore(A, zero, {accIdx}));
    Expr upd = ifThenElse(mask, bufferLoad(A, {accIdx}), zero) +
               broadcast(bufferLoad(X, {Expr(k)}), L) * ifThenElse(mask, bufferLoad(W, {Expr(k) * n + lanes}), zero);
    Stmt red = forLoop(k, 0, K, ForKind::Serial, ifThen(mask, bufferStore(A, upd, {accIdx})));
    Stmt back = ifThen(mask, bufferStore(Out, ifThenElse(mask, bufferLoad(A, {accIdx}), zero), {lanes}));
    Stmt body = forLoop(c0, 0, floordiv(n + (L - 1), L), ForKind::Serial,
                        allocate(A->data, f32, {intImm(i32, L)}, declBuffer(A, seq({init, red, back})), "local"));
    PrimFunc f = func("main", {X, W, Out}, {n}, body);
    runtime::PackedFunc fn = codegen::testutil::jitPacked(f);
    for (int64_t len : {1, 7, 16, 23}) {
      NDArray x = randomArray({K}, 4), w = randomArray({len * K}, 5), o = randomArray({len}, 6);
      fn(x, w, o, len);
      for (int64_t c = 0; c < len; ++c) {
        float want = 0;
        for (int j = 0; j < K; ++j) want += x.as<float>()[j] * w.as<float>()[j * len + c];
        QVERIFY2(std::abs(o.as<float>()[c] - want) <= 1e-5f * std::abs(want) + 1e-6f,
                 qPrintable(QString("n = %1, column %2: %3 against %4").arg(len).arg(c).arg(o.as<float>()[c]).arg(want)));
      }
    }
    std::string ir = buildLLVM({transform::makePackedAPI(f)}, Target::parse("llvm")).llvmIR();
    // The accumulator is promoted to registers: no stack slot named after it is left.
    std::istringstream lines(ir);
    for (std::string line; std::getline(lines, line);)
      QVERIFY2(!(line.find("= alloca") != std::string::npos && line.find("%acc") != std::string::npos), line.c_str());
  }

  void constantOffsetsShareOneIndex() {
    // B[...] = the sum over r < 7 of A[i2 * 28672 + rcb * 256 + rci + ... + 4096 r]: seven loads
    // at constant distances from one index inside a parallel task, as the rows of a Winograd
    // product's register tile read their inputs. Each constant term is a 64-bit GEP of its own
    // that the load's displacement absorbs. Summed into the 32-bit index (where LLVM makes the
    // sum a disjoint `or` from the known bits), every row's index was sign-extended on its own:
    // 70 sext against 22 for one row, two integer instructions per load in the Winograd products
    // of a static ResNet-18 (10-35% slower than the same model built with a symbolic batch). (A
    // serial nest alone was extended once either way.)
    auto rows = [](int count) {
      // The loops and index of the Winograd product's input rows: (f, i2, rcb, rci).
      Buffer A = buf1d("A", 65536), B = buf1d("B", 4 * 2 * 4 * 16);
      Var f = makeVar("f"), i2 = makeVar("i2"), rcb = makeVar("rcb"), rci = makeVar("rci");
      Expr sum;
      for (int r = 0; r < count; ++r) {
        Expr idx = i2 * 28672 + rcb * 256 + rci + floordiv(f, 2) * 64 + floormod(f, 2) * 16 + intImm(i32, 4096 * r);
        Expr ld = bufferLoad(A, {idx});
        sum = sum.defined() ? sum + ld : ld;
      }
      Stmt body = bufferStore(B, sum, {((f * 2 + i2) * 4 + rcb) * 16 + rci});
      for (auto [v, n] : {std::pair<Var, int>{rci, 16}, {rcb, 4}, {i2, 2}}) body = forLoop(v, 0, n, ForKind::Serial, body);
      body = forLoop(f, 0, 4, ForKind::Parallel, body);
      return func("main", {A, B}, {}, body);
    };
    // The sign extensions of a function (the packed API's argument checks have some of their own).
    auto sextCount = [](const PrimFunc& f) {
      std::string ir = buildLLVM({transform::makePackedAPI(f)}, Target::parse("llvm")).llvmIR();
      int n = 0;
      std::istringstream lines(ir);
      for (std::string line; std::getline(lines, line);) n += line.find(" sext ") != std::string::npos;
      return n;
    };
    PrimFunc f = rows(7);
    std::string r = compareWithInterpreter(f, {randomArray({65536}, 12), randomArray({4 * 2 * 4 * 16}, 13)});
    QVERIFY2(r.empty(), r.c_str());
    const int one = sextCount(rows(1)), seven = sextCount(f);
    QVERIFY2(seven <= one, qPrintable(QString("%1 sign extensions with seven rows, %2 with one").arg(seven).arg(one)));
  }

  void stridedGatherAndScatter() {
    // B[2i] = A[3i] * 2 with vector indices of stride 3 and 2: gather and scatter.
    Buffer A = buf1d("A", 96), B = buf1d("B", 64);
    Var io = makeVar("io");
    Stmt body = forLoop(io, 0, 4, ForKind::Serial,
                        bufferStore(B, bufferLoad(A, {ramp(io * 24, 3, 8)}) * broadcast(floatImm(f32, 2), 8),
                                    {ramp(io * 16, 2, 8)}));
    PrimFunc f = func("main", {A, B}, {}, body);
    std::string r = compareWithInterpreter(f, {randomArray({96}, 10), randomArray({64}, 11)});
    QVERIFY2(r.empty(), r.c_str());
  }

  void reductions() {
    // S[i] = sum_k A[i, k], X[i] = max_k A[i, k] over a flattened 2-D A.
    int M = 13, K = 29;
    Buffer A = buf1d("A", M * K), S = buf1d("S", M), X = buf1d("X", M);
    Var i = makeVar("i"), k = makeVar("k");
    Stmt body = forLoop(i, 0, M, ForKind::Serial,
                        seq({bufferStore(S, floatImm(f32, 0), {i}), bufferStore(X, floatImm(f32, -1e30), {i}),
                             forLoop(k, 0, K, ForKind::Serial,
                                     seq({bufferStore(S, bufferLoad(S, {i}) + bufferLoad(A, {i * K + k}), {i}),
                                          bufferStore(X, max(bufferLoad(X, {i}), bufferLoad(A, {i * K + k})), {i})}))}));
    PrimFunc f = func("main", {A, S, X}, {}, body);
    std::string r = compareWithInterpreter(f, {randomArray({M * K}, 12), randomArray({M}, 13), randomArray({M}, 14)});
    QVERIFY2(r.empty(), r.c_str());
  }

  void matmulVectorInnerWithTail_data() {
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("K");
    QTest::addColumn<bool>("parallel");
    QTest::newRow("64x64x64") << 64 << 64 << 64 << false;
    QTest::newRow("33x70x19 tail") << 33 << 70 << 19 << false;
    QTest::newRow("5x7x3 only tail") << 5 << 7 << 3 << false;
    QTest::newRow("parallel 61x45x17") << 61 << 45 << 17 << true;
  }
  void matmulVectorInnerWithTail() {
    QFETCH(int, M);
    QFETCH(int, N);
    QFETCH(int, K);
    QFETCH(bool, parallel);
    PrimFunc f = matmulVectorized(M, N, K, 16, parallel);
    runtime::PackedFunc fn = codegen::testutil::jitPacked(f);
    NDArray A = randomArray({M * K}, 20), B = randomArray({K * N}, 21), C = randomArray({M * N}, 22);
    fn(A, B, C);
    std::vector<float> ref(M * N);
    matmulRef(A.as<float>(), B.as<float>(), ref.data(), M, N, K);
    for (int x = 0; x < M * N; ++x) QVERIFY2(std::abs(C.as<float>()[x] - ref[x]) < 1e-4f, qPrintable(QString::number(x)));
    // And the interpreter agrees (it has no lane-masked stores, so only without a tail).
    if (N % 16 == 0) {
      std::string r = compareWithInterpreter(f, {A, B, randomArray({M * N}, 23)}, 1e-4);
      QVERIFY2(r.empty(), r.c_str());
    }
  }

  void parallelLoopCapturesScalars() {
    // B[i] = A[i] * s + t for i in parallel, s and t scalar params; many more tasks than
    // iterations per task, and fewer iterations than threads.
    Var n = makeVar("n"), s = makeVar("s", f32), t = makeVar("t", f32);
    Buffer A = buf1d("A", n), B = buf1d("B", n);
    Var i = makeVar("i");
    Stmt body = forLoop(i, 0, n, ForKind::Parallel, bufferStore(B, bufferLoad(A, {i}) * s + t, {i}));
    PrimFunc f = func("main", {A, B}, {s, t}, body);
    for (int64_t len : {1, 3, 1001}) {
      std::string r = compareWithInterpreter(f, {randomArray({len}, 30), randomArray({len}, 31), 1.5, -0.25});
      QVERIFY2(r.empty(), r.c_str());
    }
  }

  void teamLoopMeetsAtBarriers() {
    // for p in parallel(2): ok = loom_parallel_barrier()
    //   team (ok == 0): A[p] = X[p] + 1; barrier; B[p] = A[1 - p] * 10; C[p] = 1
    //   else, p == 0 alone: the same serially; C[0] = 2
    // A team launches exactly 2 tasks that meet at the barriers, so B reads the other task's A;
    // when the pool runs tasks one after another the probe answers -1 and task 0 does it all.
    Buffer X = buf1d("X", 2), A = buf1d("A", 2), B = buf1d("B", 2), C = buf1d("C", 2);
    Var p = makeVar("p"), ok = makeVar("ok", i32), q = makeVar("q");
    Expr barrier = call(i32, "loom_parallel_barrier", {});
    Expr one = floatImm(f32, 1), ten = floatImm(f32, 10);
    Stmt team = seq({bufferStore(A, bufferLoad(X, {p}) + one, {p}), evaluate(barrier),
                     bufferStore(B, bufferLoad(A, {1 - p}) * ten, {p}), bufferStore(C, one, {p})});
    Stmt serial = seq({forLoop(q, 0, 2, ForKind::Serial, bufferStore(A, bufferLoad(X, {q}) + one, {q})),
                       forLoop(q, 0, 2, ForKind::Serial, bufferStore(B, bufferLoad(A, {1 - q}) * ten, {q})),
                       bufferStore(C, floatImm(f32, 2), {0})});
    Stmt body = forLoop(p, 0, 2, ForKind::Parallel,
                        letStmt(ok, barrier, ifThen(eq(ok, intImm(i32, 0)), team, ifThen(eq(p, intImm(i32, 0)), serial))));
    PrimFunc f = func("main", {X, A, B, C}, {}, body);
    runtime::PackedFunc fn = codegen::testutil::jitPacked(f);
    for (int round = 0; round < 50; ++round) {
      NDArray x = randomArray({2}, 50 + uint64_t(round)), a = randomArray({2}, 1), b = randomArray({2}, 2);
      NDArray cc = NDArray::empty({2}, runtime::DType::f32());
      cc.as<float>()[0] = cc.as<float>()[1] = 0;
      std::vector<runtime::PackedArg> args{x, a, b, cc};
      fn.call(args);
      const float* xs = x.as<float>();
      const float* bs = b.as<float>();
      QCOMPARE(bs[0], (xs[1] + 1) * 10);
      QCOMPARE(bs[1], (xs[0] + 1) * 10);
      // The team path ran when the pool has two threads for it (this machine has >= 2 cores
      // unless LOOM_NUM_THREADS says otherwise); else the serial one did.
      const float* cs = cc.as<float>();
      QVERIFY2((cs[0] == 1 && cs[1] == 1) || (cs[0] == 2 && cs[1] == 0), "neither the team nor the serial path ran");
      if (runtime::ThreadPool::global().numThreads() >= 2) QCOMPARE(cs[0], 1.0f);
    }
    // The interpreter runs the tasks one after another: its barrier answers -1.
    NDArray x = randomArray({2}, 7), a = randomArray({2}, 1), b = randomArray({2}, 2), cc = randomArray({2}, 3);
    cc.as<float>()[1] = 0;
    std::vector<tir::Arg> args{x, a, b, cc};
    interpret(f, args);
    QCOMPARE(b.as<float>()[0], (x.as<float>()[1] + 1) * 10);
    QCOMPARE(cc.as<float>()[0], 2.0f);
    QCOMPARE(cc.as<float>()[1], 0.0f);
  }

  void unrolledAndNonDivisibleSplit() {
    // for io in ceil(n/4): for ii in unroll(4): if io*4+ii < n: B[io*4+ii] = A[io*4+ii] + 1
    Var n = makeVar("n");
    Buffer A = buf1d("A", n), B = buf1d("B", n);
    Var io = makeVar("io"), ii = makeVar("ii");
    Expr idx = io * 4 + ii;
    Stmt body = forLoop(io, 0, floordiv(n + 3, 4), ForKind::Serial,
                        forLoop(ii, 0, 4, ForKind::Unrolled,
                                ifThen(idx < n, bufferStore(B, bufferLoad(A, {idx}) + floatImm(f32, 1), {idx}))));
    PrimFunc f = func("main", {A, B}, {}, body);
    for (int64_t len : {1, 4, 10, 103}) {
      std::string r = compareWithInterpreter(f, {randomArray({len}, 40), randomArray({len}, 41)});
      QVERIFY2(r.empty(), r.c_str());
    }
  }

  void allocationsOnStackAndWorkspace_data() {
    QTest::addColumn<int>("n");
    QTest::newRow("stack") << 64;
    QTest::newRow("workspace") << 20000;
  }
  void allocationsOnStackAndWorkspace() {
    // T = A * A in a temporary, then B[i] = T[n-1-i] + A[i].
    QFETCH(int, n);
    Buffer A = buf1d("A", n), B = buf1d("B", n);
    Var tv = makeVar("T", DataType::Handle());
    Buffer T = makeBuffer("T", f32, {n});
    {
      auto* node = new BufferNode(*T.get());
      node->data = tv;
      T = Buffer(node);
    }
    Var i = makeVar("i");
    Stmt fill = forLoop(i, 0, n, ForKind::Serial, bufferStore(T, bufferLoad(A, {i}) * bufferLoad(A, {i}), {i}));
    Stmt use = forLoop(i, 0, n, ForKind::Serial,
                       bufferStore(B, bufferLoad(T, {Expr(n - 1) - i}) + bufferLoad(A, {i}), {i}));
    Stmt body = allocate(tv, f32, {n}, declBuffer(T, seq({fill, use})));
    PrimFunc f = func("main", {A, B}, {}, body);
    std::string r = compareWithInterpreter(f, {randomArray({n}, 50), randomArray({n}, 51)});
    QVERIFY2(r.empty(), r.c_str());
    std::string ir = buildLLVM({transform::makePackedAPI(f)}, Target::parse("llvm")).llvmIR();
    bool usesWorkspace = ir.find("loom_backend_alloc_workspace") != std::string::npos;
    QCOMPARE(usesWorkspace, n * 4 > 16384);
  }

  void copiedLocalAllocationKeepsItsStores() {
    // fuzz_difftest TIR seed 100057 (cache_write of an int8 reduction, lowered): at -O2 LLVM
    // turned the write-back loop t0 = t0_local into a memcpy and merged the two allocas, keeping
    // the t0_local tag on the stores and the t0 tag on the loads; with one TBAA type per buffer
    // the stores then looked dead and row 0 of t0_local was never written (out read zeros).
    PrimFunc f = parseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(R0: T.Buffer((4, 1, 6, 1), "int8"), B: T.Buffer((4, 1, 6), "int8"), C: T.Buffer((4, 1), "int8"), out: T.Buffer((4, 1, 6), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    R0_1 = T.decl_buffer((24,), "int8", data=R0.data)
    B_1 = T.decl_buffer((24,), "int8", data=B.data)
    C_1 = T.decl_buffer((4,), "int8", data=C.data)
    out_1 = T.decl_buffer((24,), "int8", data=out.data)
    t0 = T.allocate([24], "int8", "global")
    t0_1 = T.decl_buffer((24,), "int8", data=t0)
    t0_local = T.allocate([24], "int8", "local")
    t0_local_1 = T.decl_buffer((24,), "int8", data=t0_local, scope="local")
    for i0_0, i0_2 in T.grid(4, 6):
        t0_local_1[i0_0 * 6 + i0_2] = T.int8(0)
        t0_local_1[i0_0 * 6 + i0_2] = T.max(T.Select(i0_2 == 0, T.Cast("int8", i0_0), B_1[i0_0 * 6 + i0_2]), T.Select(i0_0 < 1, T.int8(5), T.int8(-1))) * R0_1[i0_0 * 6 + i0_2] + t0_local_1[i0_0 * 6 + i0_2]
    for ax0, ax1_ax2_fused in T.grid(4, 6):
        t0_1[ax0 * 6 + ax1_ax2_fused] = t0_local_1[ax0 * 6 + ax1_ax2_fused]
    for i1_0, i1_2 in T.grid(4, 6):
        out_1[i1_0 * 6 + i1_2] = T.min(C_1[i1_0], C_1[i1_0] // T.int8(5)) - T.if_then_else(B_1[i1_0 * 6 + i1_2] < T.int8(3), t0_1[i1_0 * 6 + i1_2], T.int8(1))
)");
    std::vector<tir::Arg> inputs;
    const std::vector<int64_t> shapes[] = {{4, 1, 6, 1}, {4, 1, 6}, {4, 1}, {4, 1, 6}};
    for (int k = 0; k < 4; ++k) inputs.push_back(randomArray(shapes[k], 100057ull * 131 + uint64_t(k), runtime::DType{runtime::DType::Int, 8, 1}));
    for (const char* target : {"llvm -opt-level=2", "llvm"}) {
      std::string r = compareWithInterpreter(f, inputs, 0, target);
      QVERIFY2(r.empty(), (std::string(target) + ": " + r).c_str());
    }
  }

  void integerDivisionAndConditionals() {
    // B[i] = floordiv(A[i], 3) + floormod(A[i], 3) * 100 + truncdiv(A[i], 3) * 10000
    //        + select(A[i] > 0, 1, -1) * if_then_else(i < 5, 7, 9)   (int32, negative values)
    int n = 40;
    Buffer A = buf1d("A", n, i32), B = buf1d("B", n, i32);
    Var i = makeVar("i");
    Expr a = bufferLoad(A, {i});
    Var x = makeVar("x");
    Expr v = floordiv(a, 3) + floormod(a, 3) * 100 + truncdiv(a, 3) * 10000 + truncmod(a, 3) * 1000000 +
             select(a > 0, Expr(1), Expr(-1)) * ifThenElse(i < 5, Expr(7), Expr(9));
    Stmt body = forLoop(i, 0, n, ForKind::Serial, bufferStore(B, let(x, v, Expr(x) + min(a, 0) - max(a, 0)), {i}));
    PrimFunc f = func("main", {A, B}, {}, body);
    NDArray in = NDArray::empty({n}, runtime::DType{runtime::DType::Int, 32, 1});
    for (int k = 0; k < n; ++k) in.as<int32_t>()[k] = k - 20;
    runtime::PackedFunc fn = codegen::testutil::jitPacked(f);
    NDArray out = NDArray::empty({n}, runtime::DType{runtime::DType::Int, 32, 1});
    fn(in, out);
    for (int k = 0; k < n; ++k) {
      int av = k - 20;
      int fd = av >= 0 ? av / 3 : -((-av + 2) / 3);
      int fm = av - fd * 3;
      int want = fd + fm * 100 + (av / 3) * 10000 + (av % 3) * 1000000 + (av > 0 ? 1 : -1) * (k < 5 ? 7 : 9);
      want = want + std::min(av, 0) - std::max(av, 0);
      QCOMPARE(out.as<int32_t>()[k], want);
    }
  }

  void mixedIndexTypes() {
    // An int64 loop over int32 bounds, a let that widens, an integer used as a condition.
    int n = 20;
    Buffer A = buf1d("A", n), B = buf1d("B", n);
    Var i = makeVar("i", DataType::Int(64)), w = makeVar("w", DataType::Int(64));
    Stmt body = forLoop(i, Expr(0), Expr(n), ForKind::Serial,
                        letStmt(w, Expr(3), ifThen(floormod(Expr(i), w), bufferStore(B, bufferLoad(A, {i}) * floatImm(f32, 3), {i}),
                                                   bufferStore(B, floatImm(f32, -1), {i}))));
    PrimFunc f = func("main", {A, B}, {}, body);
    NDArray a = randomArray({n}, 60), b = randomArray({n}, 61);
    codegen::testutil::jitPacked(f)(a, b);
    for (int k = 0; k < n; ++k) QCOMPARE(b.as<float>()[k], k % 3 ? a.as<float>()[k] * 3 : -1.0f);
  }

  void assertFailureReportsMessage() {
    Var n = makeVar("n");
    Buffer A = buf1d("A", n);
    Var i = makeVar("i");
    Stmt body = assertStmt(n > 2, "main: n must exceed 2",
                           forLoop(i, 0, n, ForKind::Serial, bufferStore(A, floatImm(f32, 1), {i})));
    runtime::PackedFunc fn = codegen::testutil::jitPacked(func("main", {A}, {}, body));
    NDArray ok = NDArray::empty({3}, runtime::DType::f32());
    fn(ok);
    QCOMPARE(ok.as<float>()[2], 1.0f);
    NDArray small = NDArray::empty({2}, runtime::DType::f32());
    try {
      fn(small);
      QFAIL("expected a failure");
    } catch (const runtime::RuntimeFailure& e) {
      QCOMPARE(QString(e.what()), QString("main: main: n must exceed 2"));
    }
  }

  void notLoweredIsAnError() {
    Buffer A = buf1d("A", 4);
    auto* blk = new BlockNode();
    blk->name = "C";
    blk->body = bufferStore(A, floatImm(f32, 0), {0});
    Stmt body = blockRealize({}, boolImm(true), Block(blk));
    try {
      buildLLVM({func("main", {A}, {}, body)}, Target::parse("llvm"));
      QFAIL("expected CodeGenError");
    } catch (const CodeGenError& e) {
      QVERIFY2(std::string(e.what()).find("block 'C'") != std::string::npos, e.what());
    }
    Stmt callBody = evaluate(call(f32, "no_such_intrinsic", {floatImm(f32, 1)}));
    QVERIFY_THROWS_EXCEPTION(CodeGenError, buildLLVM({func("g", {A}, {}, callBody)}, Target::parse("llvm")));
  }
};

QTEST_APPLESS_MAIN(TestLLVMLoops)
#include "test_llvm_loops.moc"
