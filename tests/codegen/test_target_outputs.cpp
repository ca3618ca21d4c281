// Targets (parsing, errors, cross compilation) and outputs: IR text, assembly with TIR loop lines,
// objects, shared libraries, and the latency of parse + lower + codegen to assembly.
#include <QtTest>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>

#include "CodegenTestUtil.h"
#include "codegen/LLVMInfo.h"
#include "codegen/Listing.h"
#include "codegen/SharedLibrary.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/transform/Pass.h"
#include "core/transform/Pipeline.h"
#include "runtime/Module.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::codegen;
using loom::runtime::NDArray;

namespace {
const DataType f32 = DataType::Float(32);

/// A scheduled 64x64 matmul in block form: i parallel, k, then j vectorized by 16 after a split.
const char* kMatmulScript = R"(@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    for i in T.parallel(64):
        for jo in range(4):
            for k in range(64):
                for ji in T.vectorized(16):
                    with T.block("C"):
                        vi = T.axis.spatial(64, i)
                        vj = T.axis.spatial(64, jo * 16 + ji)
                        vk = T.axis.reduce(64, k)
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

/// A lowered function with three loops (already flat): C = A @ B, 32x32, scalar.
PrimFunc loweredMatmul(int n, const std::string& name = "main") {
  Buffer A = makeBuffer("A", f32, {n * n}), B = makeBuffer("B", f32, {n * n}), C = makeBuffer("C", f32, {n * n});
  Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k");
  Stmt body = forLoop(
      i, 0, n, ForKind::Serial,
      forLoop(j, 0, n, ForKind::Serial,
              seq({bufferStore(C, floatImm(f32, 0), {i * n + j}),
                   forLoop(k, 0, n, ForKind::Serial,
                           bufferStore(C, bufferLoad(C, {i * n + j}) + bufferLoad(A, {i * n + k}) * bufferLoad(B, {k * n + j}),
                                       {i * n + j}))})));
  return makePrimFunc(name, {A->data, B->data, C->data}, {{A->data, A}, {B->data, B}, {C->data, C}}, body);
}

/// Runs fn(A, B, C) on n x n matrices (passed as flat arrays when `flat`) against plain C++.
void checkMatmul(const runtime::PackedFunc& fn, int n, bool flat) {
  std::vector<int64_t> shape = flat ? std::vector<int64_t>{n * n} : std::vector<int64_t>{n, n};
  NDArray A = NDArray::empty(shape, runtime::DType::f32()), B = NDArray::empty(shape, runtime::DType::f32());
  NDArray C = NDArray::empty(shape, runtime::DType::f32());
  for (int x = 0; x < n * n; ++x) A.as<float>()[x] = float(x % 7) - 3, B.as<float>()[x] = float(x % 5) * 0.5f;
  fn(A, B, C);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      float s = 0;
      for (int k = 0; k < n; ++k) s += A.as<float>()[r * n + k] * B.as<float>()[k * n + c];
      QCOMPARE(C.as<float>()[r * n + c], s);
    }
}

template <class E, class F> QString errorOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return QString::fromStdString(e.what());
  }
  return QString("<no error>");
}
}  // namespace

class TestTargetOutputs : public QObject {
  Q_OBJECT
private slots:
  void parseTargets() {
    Target host = Target::parse("llvm");
    QVERIFY(host.isHost());
    QCOMPARE(host.cpu, hostCpuName());
    QVERIFY(host.nativeVectorBits() >= 128);
    Target skx = Target::parse("llvm -mcpu=skylake-avx512 -mattr=+avx512f,+avx512bw -opt-level=2 -fast-math");
    QCOMPARE(skx.cpu, std::string("skylake-avx512"));
    QCOMPARE(skx.attrs, (std::vector<std::string>{"+avx512f", "+avx512bw"}));
    QCOMPARE(skx.optLevel, 2);
    QVERIFY(skx.fastMath);
    QCOMPARE(skx.nativeVectorBits(), 512);
    QCOMPARE(Target::parse("llvm --mcpu=haswell").nativeVectorBits(), 256);
    Target arm = Target::parse("llvm -mtriple=aarch64-linux-gnu");
    QCOMPARE(arm.triple, std::string("aarch64-unknown-linux-gnu"));
    QCOMPARE(arm.cpu, std::string("generic"));
    QVERIFY(!arm.isHost());
    QCOMPARE(arm.nativeVectorBits(), 128);
    Target back = Target::parse(skx.str());
    QCOMPARE(back.str(), skx.str());
    QCOMPARE(back.triple, skx.triple);
  }

  void targetErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("kind") << "rocm" << "unknown target kind 'rocm'";
    QTest::newRow("cuda arch") << "cuda -arch=compute_90" << "-arch needs a value like sm_80 or sm_90";
    QTest::newRow("empty") << "" << "empty target string";
    QTest::newRow("key") << "llvm -mfoo=1" << "unknown target option '-mfoo'";
    QTest::newRow("triple") << "llvm -mtriple=nonsense-xyz-abc" << "unknown target triple 'nonsense-xyz-abc'";
    QTest::newRow("cpu") << "llvm -mcpu=pentium9000" << "unknown CPU 'pentium9000'";
    QTest::newRow("feature") << "llvm -mattr=+avx9000" << "unknown target feature 'avx9000'";
    QTest::newRow("feature sign") << "llvm -mattr=avx2" << "target feature 'avx2' must start with '+' or '-'";
    QTest::newRow("opt level") << "llvm -opt-level=7" << "-opt-level must be 0, 1, 2 or 3, got '7'";
    QTest::newRow("missing value") << "llvm -mcpu" << "target option -mcpu needs a value";
    QTest::newRow("stray word") << "llvm avx2" << "unexpected word 'avx2'";
  }
  void targetErrors() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    QString got = errorOf<TargetError>([&] { Target::parse(text.toStdString()); });
    QVERIFY2(got.contains(message), qPrintable(got));
  }

  void irCarriesAliasAlignmentAndLoopInfo() {
    CodeGenOptions opts;
    opts.optimize = false;
    std::string ir = buildLLVM({loweredMatmul(8)}, Target::parse("llvm"), opts).llvmIR();
    QVERIFY(ir.find("noalias") != std::string::npos);
    QVERIFY(ir.find("align 64") != std::string::npos);
    QVERIFY(ir.find("!tbaa") != std::string::npos);
    QVERIFY(ir.find("llvm.loop.mustprogress") != std::string::npos);
    QVERIFY(ir.find("__loom_module_meta") != std::string::npos);
  }

  void asmLinesMapToEveryLoop() {
    PrimFunc f = loweredMatmul(32);
    PrintResult printed = printWithMap(f);
    CodeGenOptions opts;
    opts.lineMap = loopLineMap(printed);
    QCOMPARE(opts.lineMap.size(), size_t(3));
    std::vector<AsmLine> lines = emitAsmWithLines(f, Target::parse("llvm"), opts);
    QVERIFY(!lines.empty());
    std::set<int> seen;
    for (auto& l : lines) seen.insert(l.tirLine);
    for (auto& [node, line] : opts.lineMap)
      QVERIFY2(seen.count(line), qPrintable(QString("no assembly for the loop on line %1").arg(line)));
    // Labels and directives belong to no loop; no debug sections in the text.
    for (auto& l : lines) {
      QVERIFY(l.text.find(".debug_") == std::string::npos);
      QVERIFY(l.text.find(".loc") == std::string::npos);
    }
  }

  void crossTargetEmitsAArch64() {
    LLVMModule m = buildLLVM({transform::makePackedAPI(loweredMatmul(16))}, Target::parse("llvm -mtriple=aarch64-linux-gnu"));
    std::string s = m.assembly();
    QVERIFY2(s.find("fmadd") != std::string::npos || s.find("fmla") != std::string::npos ||
                 s.find("fmul") != std::string::npos,
             s.substr(0, 2000).c_str());
    QVERIFY(s.find("ret") != std::string::npos);
    QVERIFY(s.find("%xmm") == std::string::npos);
    std::vector<uint8_t> obj = m.objectCode();
    QVERIFY(obj.size() > 64);
    QCOMPARE(obj[0], uint8_t(0x7f));
    QCOMPARE(obj[1], uint8_t('E'));
    QCOMPARE(int(obj[18] | (obj[19] << 8)), 183);  // e_machine EM_AARCH64
    QString jitErr = errorOf<CodeGenError>([&] { JITModule jit(std::move(m)); });
    QVERIFY2(jitErr.contains("cannot run code for 'aarch64"), qPrintable(jitErr));
  }

  void sharedLibraryLoadsAndRuns() {
    LLVMModule m = buildLLVM({transform::makePackedAPI(loweredMatmul(16))}, Target::parse("llvm"));
    QString dir = QDir::tempPath() + "/loom-codegen-test-" + QString::number(QCoreApplication::applicationPid());
    QDir().mkpath(dir);
    std::string so = (dir + "/matmul.so").toStdString();
    std::string obj = (dir + "/matmul.o").toStdString();
    m.writeObject(obj);
    QVERIFY(QFileInfo(QString::fromStdString(obj)).size() > 0);
    m.writeSharedLibrary(so);
    runtime::Module lib = runtime::Module::loadFile(so);
    checkMatmul(lib.getFunction("main"), 16, true);
    QVERIFY(lib.meta().has_value());
    QVERIFY(lib.meta()->find("\"main\"") != std::string::npos);
    QDir(dir).removeRecursively();
  }

  void partsLinkIntoOneLibrary() {
    // Three functions in two parts built on two threads (as an export does): only the first part
    // describes the module (all three, in the order given); the parts' objects, emitted in
    // parallel, link into one library whose functions all run.
    std::vector<PrimFunc> fs;
    for (int k = 0; k < 3; ++k) fs.push_back(transform::makePackedAPI(loweredMatmul(8 + 4 * k, "mm" + std::to_string(k))));
    std::vector<LLVMModule> parts = buildLLVMParts(fs, Target::parse("llvm"), {}, 2);
    QCOMPARE(parts.size(), size_t(2));
    QCOMPARE(parts[0].functionNames(), (std::vector<std::string>{"mm0", "mm2"}));
    QCOMPARE(parts[1].functionNames(), (std::vector<std::string>{"mm1"}));
    QCOMPARE(buildLLVMParts(fs, Target::parse("llvm"), {}, 8).size(), size_t(3));
    QString dir = QDir::tempPath() + "/loom-codegen-parts-" + QString::number(QCoreApplication::applicationPid());
    QDir().mkpath(dir);
    std::vector<std::vector<uint8_t>> code = objectCodeOfParts(parts);
    std::vector<std::string> objects;
    for (size_t i = 0; i < code.size(); ++i) {
      objects.push_back((dir + QString("/part%1.o").arg(i)).toStdString());
      std::ofstream(objects.back(), std::ios::binary).write(reinterpret_cast<const char*>(code[i].data()), std::streamsize(code[i].size()));
    }
    std::string so = (dir + "/parts.so").toStdString();
    linkSharedLibrary(objects, Target::host(), so);
    runtime::Module lib = runtime::Module::loadFile(so);
    QVERIFY(lib.meta().has_value());
    // A copy: meta() returns the optional by value, so a reference into it dangled at the end of
    // this statement (AddressSanitizer: stack-use-after-scope in the find calls below).
    std::optional<std::string> metaOrNone = lib.meta();
    QVERIFY(metaOrNone);
    const std::string& meta = *metaOrNone;
    QVERIFY2(meta.find("\"mm0\"") < meta.find("\"mm1\"") && meta.find("\"mm1\"") < meta.find("\"mm2\"") &&
                 meta.find("\"mm2\"") != std::string::npos,
             meta.c_str());
    for (int k = 0; k < 3; ++k) checkMatmul(lib.getFunction("mm" + std::to_string(k)), 8 + 4 * k, true);
    QDir(dir).removeRecursively();
  }

  void listingMapsAsmToLoopLines() {
    transform::PassContext ctx;
    PrimFunc lowered = transform::lower(parseFunc(kMatmulScript, "matmul.py"), ctx);
    Listing l = makeListing(lowered, Target::parse("llvm"), true);
    QStringList tirLines = QString::fromStdString(l.tir).split('\n');
    std::set<int> loopLines;
    for (int k = 0; k < tirLines.size(); ++k)
      if (tirLines[k].trimmed().startsWith("for ")) loopLines.insert(k + 1);
    QVERIFY(loopLines.size() >= 2);
    std::set<int> seen;
    for (auto& a : l.asmLines) {
      if (a.tirLine == 0) continue;
      QVERIFY2(loopLines.count(a.tirLine), qPrintable(QString("asm line maps to TIR line %1: %2").arg(a.tirLine).arg(tirLines.value(a.tirLine - 1))));
      seen.insert(a.tirLine);
    }
    QCOMPARE(seen, loopLines);
    QVERIFY(l.llvmIR.find("define") != std::string::npos);
    QVERIFY(l.codegenMs > 0);
  }

  void parseLowerCodegenLatency() {
    using Clock = std::chrono::steady_clock;
    auto t0 = Clock::now();
    PrimFunc f = parseFunc(kMatmulScript, "matmul.py");
    auto t1 = Clock::now();
    transform::PassContext ctx;
    PrimFunc lowered = transform::lower(f, ctx);
    PrintResult printed = printWithMap(lowered);
    auto t2 = Clock::now();
    PrimFunc packed = transform::makePackedAPI(lowered);
    CodeGenOptions opts;
    opts.lineMap = loopLineMap(printed);
    LLVMModule m = buildLLVM({packed}, Target::parse("llvm"), opts);
    std::vector<AsmLine> lines = m.assemblyWithLines();
    auto t3 = Clock::now();
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    qInfo("matmul 64x64 live path: parse %.1f ms, lower %.1f ms, codegen to asm %.1f ms, total %.1f ms "
          "(budget 300 ms with scheduling); %zu asm lines",
          ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t0, t3), lines.size());
    int zmm = 0;
    for (auto& l : lines) zmm += l.text.find("zmm") != std::string::npos || l.text.find("ymm") != std::string::npos;
    qInfo("%d assembly lines use 256/512-bit vector registers", zmm);
    // The lowered loops all show up in the assembly's line map.
    std::set<int> seen;
    for (auto& l : lines) seen.insert(l.tirLine);
    for (auto& [node, line] : opts.lineMap) QVERIFY2(seen.count(line), qPrintable(QString("loop line %1").arg(line)));
    // And the compiled code is right.
    JITModule jit(std::move(m));
    checkMatmul(jit.getFunction("main"), 64, false);
  }
};

QTEST_APPLESS_MAIN(TestTargetOutputs)
#include "test_target_outputs.moc"
