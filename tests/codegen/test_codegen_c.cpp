// The C source backend: the emitted C, compiled by the system C compiler into a shared library,
// computes what the interpreter (and the LLVM backend) compute, and checks arguments the same way.
#include <QtTest>

#include <cmath>
#include <fstream>

#include "CodegenTestUtil.h"
#include "codegen/CodeGenC.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"
#include "runtime/Module.h"
#include "runtime/RuntimeFailure.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::codegen;
using loom::runtime::NDArray;

namespace {
const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

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

PrimFunc elementwise() {
  Var n = makeVar("n");
  Buffer A = makeBuffer("A", f32, {n}), B = makeBuffer("B", f32, {n}), C = makeBuffer("C", f32, {n});
  Var i = makeVar("i");
  Stmt body = forLoop(i, 0, n, ForKind::Serial,
                      bufferStore(C, call("tanh", {bufferLoad(A, {i})}) * floatImm(f32, 2) - bufferLoad(B, {i}), {i}));
  return func("elementwise", {A, B, C}, {}, body);
}

/// C[i] = exp(A[i]) + B[i] in vectors of 8 with a masked tail, the outer loop parallel.
PrimFunc maskedParallel() {
  Var n = makeVar("n");
  Buffer A = makeBuffer("A", f32, {n}), B = makeBuffer("B", f32, {n}), C = makeBuffer("C", f32, {n});
  Var io = makeVar("io");
  int L = 8;
  Expr idx = ramp(io * L, 1, L);
  Expr mask = idx < broadcast(n, L);
  Expr zero = broadcast(floatImm(f32, 0), L);
  Expr value = call("exp", {ifThenElse(mask, bufferLoad(A, {idx}), zero)}) + ifThenElse(mask, bufferLoad(B, {idx}), zero);
  Stmt body = forLoop(io, 0, floordiv(n + (L - 1), L), ForKind::Parallel, ifThen(mask, bufferStore(C, value, {idx})));
  return func("masked_parallel", {A, B, C}, {}, body);
}

/// B[i] = floordiv/floormod/min/max mix over int32, with an assert, a temporary and a let.
PrimFunc integerMix() {
  int n = 40;
  Buffer A = makeBuffer("A", i32, {n}), B = makeBuffer("B", i32, {n});
  Var i = makeVar("i"), x = makeVar("x");
  Var tv = makeVar("T", DataType::Handle());
  Buffer T = makeBuffer("T", i32, {n});
  {
    auto* node = new BufferNode(*T.get());
    node->data = tv;
    T = Buffer(node);
  }
  Expr a = bufferLoad(A, {i});
  Expr v = floordiv(a, 3) + floormod(a, 3) * 100 + truncdiv(a, 3) * 10000 + truncmod(a, 3) * 1000000;
  Stmt fill = forLoop(i, 0, n, ForKind::Serial, bufferStore(T, let(x, v, Expr(x) + min(a, 0) - max(a, 0)), {i}));
  Stmt copy = forLoop(i, 0, n, ForKind::Unrolled, bufferStore(B, bufferLoad(T, {i}) + select(a > 0, Expr(1), Expr(-1)), {i}));
  Stmt body = assertStmt(bufferLoad(A, {0}) > -1000, "integer_mix: A[0] is too small", allocate(tv, i32, {n}, declBuffer(T, seq({fill, copy}))));
  return func("integer_mix", {A, B}, {}, body);
}

/// Casts to and from float16 / bfloat16 and bool, vectorized.
PrimFunc casts() {
  int n = 32;
  Buffer A = makeBuffer("A", f32, {n}), H = makeBuffer("H", DataType::Float(16), {n});
  Buffer BF = makeBuffer("BF", DataType::BFloat16(), {n}), Q = makeBuffer("Q", DataType::Bool(), {n});
  Buffer U = makeBuffer("U", DataType::UInt(8), {n});
  Var i = makeVar("i");
  Expr idx = ramp(i * 8, 1, 8);
  Expr a = bufferLoad(A, {idx});
  Stmt body = forLoop(i, 0, n / 8, ForKind::Serial,
                      seq({bufferStore(H, cast(DataType::Float(16, 8), a) * cast(DataType::Float(16, 8), a), {idx}),
                           bufferStore(BF, cast(DataType::BFloat16(8), a) + cast(DataType::BFloat16(8), a), {idx}),
                           bufferStore(Q, a > broadcast(floatImm(f32, 0), 8), {idx}),
                           bufferStore(U, cast(DataType::UInt(8, 8), call("fabs", {a}) * broadcast(floatImm(f32, 100), 8)), {idx})}));
  return func("casts", {A, H, BF, Q, U}, {}, body);
}

/// A team loop (see test_llvm_loops): 2 tasks, A[p] = X[p] + 1, barrier, B[p] = A[1 - p] * 10,
/// C[p] = 1; when the tasks run one after another task 0 does it all serially and sets C[0] = 2.
PrimFunc teamLoop() {
  Buffer X = makeBuffer("X", f32, {2}), A = makeBuffer("A", f32, {2}), B = makeBuffer("B", f32, {2}),
         C = makeBuffer("C", f32, {2});
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
  return func("team_loop", {X, A, B, C}, {}, body);
}

/// Builds `source` into a shared library with cc; returns its path ("" and a message on failure).
std::string compileC(const std::string& source, const QString& dir, std::string* log) {
  std::string c = (dir + "/module.c").toStdString(), so = (dir + "/module.so").toStdString();
  std::ofstream(c) << source;
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start("cc", {"-std=c11", "-O2", "-fPIC", "-shared", "-fwrapv", "-fexcess-precision=standard", "-Wno-main",
                 "-I" LOOM_SOURCE_DIR "/runtime/include", "-o", QString::fromStdString(so), QString::fromStdString(c), "-lm"});
  p.waitForFinished(60000);
  *log = p.readAll().toStdString();
  return p.exitCode() == 0 && p.exitStatus() == QProcess::NormalExit ? so : std::string();
}

NDArray randomArray(std::vector<int64_t> shape, uint64_t seed, runtime::DType t = runtime::DType::f32()) {
  NDArray a = NDArray::empty(std::move(shape), t);
  fillRandom(a, seed);
  return a;
}
}  // namespace

class TestCodeGenC : public QObject {
  Q_OBJECT
  QString m_dir;
  runtime::Module m_lib;
  std::string m_source;

private slots:
  void initTestCase() {
    m_dir = QDir::tempPath() + "/loom-codegen-c-" + QString::number(QCoreApplication::applicationPid());
    QDir().mkpath(m_dir);
    std::vector<PrimFunc> packed;
    for (auto& f : {elementwise(), maskedParallel(), integerMix(), casts(), teamLoop()})
      packed.push_back(transform::makePackedAPI(f));
    m_source = emitC(packed);
    std::string log;
    std::string so = compileC(m_source, m_dir, &log);
    QVERIFY2(!so.empty(), (log + "\n" + m_source.substr(0, 6000)).c_str());
    m_lib = runtime::Module::loadFile(so);
  }
  void cleanupTestCase() { QDir(m_dir).removeRecursively(); }

  void sourceLooksLikeC() {
    QVERIFY(m_source.find("#include \"loom/c_runtime_api.h\"") != std::string::npos);
    QVERIFY(m_source.find("LOOM_DLL int32_t elementwise(") != std::string::npos);
    QVERIFY(m_source.find("loom_backend_parallel_launch") != std::string::npos);
    QVERIFY(m_lib.meta().has_value() && m_lib.meta()->find("masked_parallel") != std::string::npos);
  }

  void elementwiseMatchesInterpreter() {
    PrimFunc f = elementwise();
    for (int64_t n : {1, 9, 300}) {
      NDArray a = randomArray({n}, 1), b = randomArray({n}, 2);
      NDArray want = NDArray::empty({n}, runtime::DType::f32()), got = NDArray::empty({n}, runtime::DType::f32());
      interpret(f, {a, b, want});
      m_lib.getFunction("elementwise")(a, b, got);
      std::string r = mismatchReport(got, want, 1e-6, 1e-7);
      QVERIFY2(r.empty(), r.c_str());
    }
  }

  void maskedParallelMatchesCpp() {
    for (int64_t n : {3, 8, 77}) {
      NDArray a = randomArray({n}, 3), b = randomArray({n}, 4), c = NDArray::empty({n}, runtime::DType::f32());
      m_lib.getFunction("masked_parallel")(a, b, c);
      for (int64_t k = 0; k < n; ++k) {
        float want = std::exp(a.as<float>()[k]) + b.as<float>()[k];
        QVERIFY(std::abs(c.as<float>()[k] - want) <= 1e-6f * std::abs(want));
      }
    }
  }

  void teamLoopMeetsAtBarriers() {
    QVERIFY(m_source.find("loom_backend_parallel_barrier(task_id, num_task)") != std::string::npos);
    for (int round = 0; round < 20; ++round) {
      NDArray x = randomArray({2}, 60 + uint64_t(round)), a = randomArray({2}, 1), b = randomArray({2}, 2);
      NDArray c = NDArray::empty({2}, runtime::DType::f32());
      c.as<float>()[0] = c.as<float>()[1] = 0;
      m_lib.getFunction("team_loop")(x, a, b, c);
      QCOMPARE(b.as<float>()[0], (x.as<float>()[1] + 1) * 10);
      QCOMPARE(b.as<float>()[1], (x.as<float>()[0] + 1) * 10);
      const float* cs = c.as<float>();
      QVERIFY((cs[0] == 1 && cs[1] == 1) || (cs[0] == 2 && cs[1] == 0));
    }
  }

  void integersAndAssert() {
    PrimFunc f = integerMix();
    runtime::DType t{runtime::DType::Int, 32, 1};
    NDArray a = NDArray::empty({40}, t);
    for (int k = 0; k < 40; ++k) a.as<int32_t>()[k] = k - 20;
    NDArray want = NDArray::empty({40}, t), got = NDArray::empty({40}, t);
    interpret(f, {a, want});
    m_lib.getFunction("integer_mix")(a, got);
    QVERIFY2(mismatchReport(got, want, 0, 0).empty(), mismatchReport(got, want, 0, 0).c_str());
    // The LLVM backend agrees bit for bit.
    NDArray viaLLVM = NDArray::empty({40}, t);
    codegen::testutil::jitPacked(f)(a, viaLLVM);
    QVERIFY(mismatchReport(viaLLVM, got, 0, 0).empty());
    a.as<int32_t>()[0] = -5000;
    try {
      m_lib.getFunction("integer_mix")(a, got);
      QFAIL("expected the assert to fail");
    } catch (const runtime::RuntimeFailure& e) {
      QCOMPARE(QString(e.what()), QString("integer_mix: integer_mix: A[0] is too small"));
    }
  }

  void castsMatchInterpreter() {
    PrimFunc f = casts();
    int n = 32;
    NDArray a = randomArray({n}, 5);
    a.as<float>()[3] = 0.0f;
    std::vector<runtime::DType> types = {{runtime::DType::Float, 16, 1}, {runtime::DType::BFloat, 16, 1},
                                         {runtime::DType::Bool, 1, 1}, {runtime::DType::UInt, 8, 1}};
    std::vector<NDArray> want, got;
    for (auto& t : types) want.push_back(NDArray::empty({n}, t)), got.push_back(NDArray::empty({n}, t));
    interpret(f, {a, want[0], want[1], want[2], want[3]});
    m_lib.getFunction("casts")(a, got[0], got[1], got[2], got[3]);
    for (size_t k = 0; k < types.size(); ++k) {
      std::string r = mismatchReport(got[k], want[k], 0, 0);
      QVERIFY2(r.empty(), (types[k].str() + ": " + r).c_str());
    }
  }

  void argumentChecksAsInLLVM() {
    NDArray a = NDArray::empty({8}, runtime::DType::f32()), b = NDArray::empty({9}, runtime::DType::f32());
    NDArray c = NDArray::empty({8}, runtime::DType::f32());
    try {
      m_lib.getFunction("elementwise")(a, b, c);
      QFAIL("expected a shape error");
    } catch (const runtime::RuntimeFailure& e) {
      QCOMPARE(QString(e.what()), QString("elementwise: elementwise: argument 1 (B) has shape [9], expected [8]"));
    }
    try {
      m_lib.getFunction("elementwise")(a, b);
      QFAIL("expected a count error");
    } catch (const runtime::RuntimeFailure& e) {
      QCOMPARE(QString(e.what()), QString("elementwise: elementwise: expected 3 arguments, got 2"));
    }
  }

  void notLoweredIsAnError() {
    Buffer A = makeBuffer("A", f32, {4});
    auto* blk = new BlockNode();
    blk->name = "C";
    blk->body = bufferStore(A, floatImm(f32, 0), {0});
    QVERIFY_THROWS_EXCEPTION(CodeGenError, emitC({func("main", {A}, {}, blockRealize({}, boolImm(true), Block(blk)))}));
  }
};

QTEST_APPLESS_MAIN(TestCodeGenC)
#include "test_codegen_c.moc"
