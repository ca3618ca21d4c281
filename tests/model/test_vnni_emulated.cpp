// The AVX-512 VNNI int8 kernels checked on a machine without VNNI (this one: AVX2 only). The
// int8 conv and dense kernels of a QDQ model are scheduled and compiled for Cascade Lake and Ice
// Lake servers (-mcpu=cascadelake / icelake-server): their code must use vpdpbusd. Then, in the
// compiled LLVM IR, each vpdpbusd call is replaced by the instruction's definition from Intel's
// manual (per int32 lane: src + the 4 products of zero-extended bytes of the first operand and
// sign-extended bytes of the second, wrapping), the functions are retargeted to this CPU, and
// the kernel runs here. Its output must equal the interpreter's on the unscheduled kernel, whose
// dot4_u8s8 is the intrinsic's description: so the VNNI path's operand order (u8 data, s8
// weights), lane slicing, accumulator chaining and the AVX-512 schedule around it compute the
// definition. What this cannot check is the silicon itself: vpdpbusd never executes here.
// So where the host has AVX-512 VNNI (Zen 4/5, Ice Lake and later), hostVnniKernelsOnSilicon
// compiles the same kernels for the host (target "llvm": the host's CPU and features, what
// `loom compile` uses), requires vpdpbusd in them, runs them unedited on random full-range bytes
// and compares with the interpreter; it skips on a host without VNNI.
#include <QtTest>
#include <cstring>
#include <random>

#include "codegen/CodeGenLLVM.h"
#include "codegen/JITModule.h"
#include "VnniEmulation.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/CompileModel.h"
#include "core/driver/DefaultSchedule.h"
#include "core/graph/Expr.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/topi/Workloads.h"

using namespace loom;

namespace {

runtime::NDArray ints(const std::vector<int64_t>& shape, int lo, int hi, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType{runtime::DType::Int, 8, 1});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<int8_t>()[i] = int8_t(u(rng));
  return a;
}

graph::Expr scalar(double v, DataType t) { return graph::makeScalar(v, t); }

/// quantize(relu(conv2d 3x3 pad 1, 32 -> 48 channels, 9x9)) or quantize(dense(5 x 72 -> 40)) of
/// dequantized u8 data and full-range s8 weights.
graph::Module qdqModel(bool conv) {
  DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
  std::vector<int64_t> xs = conv ? std::vector<int64_t>{1, 32, 9, 9} : std::vector<int64_t>{5, 72};
  std::vector<int64_t> ws = conv ? std::vector<int64_t>{48, 32, 3, 3} : std::vector<int64_t>{40, 72};
  graph::Var x = graph::makeVar("x", graph::tensorType(xs, u8));
  graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(130, u8)});
  graph::Expr dw = graph::makeCall("qnn.dequantize", {graph::makeConstant(ints(ws, -128, 127, 3)), scalar(0.003, f32), scalar(0, i8)});
  graph::Attrs attrs;
  if (conv) attrs.set("padding", std::vector<int64_t>{1, 1, 1, 1});
  graph::Expr y = graph::makeCall(conv ? "nn.conv2d" : "nn.dense", {dx, dw}, attrs);
  if (conv) y = graph::makeCall("nn.relu", {y});
  graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(0.1, f32), scalar(conv ? 0 : 128, u8)}, {{"out_dtype", u8}});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, q);
  return m;
}

/// The kernel (opt level 3, NCHWc) whose group holds `op`, unscheduled.
tir::PrimFunc kernelWith(const graph::Module& m, const std::string& op) {
  driver::CompileModelOptions o;
  o.optLevel = 3;
  for (auto& g : driver::extractGroups(m, {}, o))
    for (auto& name : g.ops)
      if (name == op) return g.func;
  return {};
}

bool sameBytes(const runtime::NDArray& a, const runtime::NDArray& b) {
  return a.numel() == b.numel() && a.dtype() == b.dtype() &&
         std::memcmp(a.data(), b.data(), size_t(a.numel()) * size_t(a.dtype().bits / 8)) == 0;
}

}  // namespace

class TestVnniEmulated : public QObject {
  Q_OBJECT
private slots:
  void vnniKernelsComputeTheDefinition_data() {
    QTest::addColumn<QString>("cpu");
    QTest::addColumn<bool>("conv");
    QTest::newRow("cascadelake conv") << "cascadelake" << true;
    QTest::newRow("cascadelake dense") << "cascadelake" << false;
    QTest::newRow("icelake-server conv") << "icelake-server" << true;
    QTest::newRow("icelake-server dense") << "icelake-server" << false;
  }
  void vnniKernelsComputeTheDefinition() {
    QFETCH(QString, cpu);
    QFETCH(bool, conv);
    const tir::PrimFunc f = kernelWith(qdqModel(conv), conv ? "qnn.conv2d_u8s8" : "qnn.dense_u8s8");
    QVERIFY(f.defined());
    driver::OperatorOptions options;
    options.target = "llvm -mcpu=" + cpu.toStdString();
    options.schedule = driver::defaultScheduleScript(f);
    transform::PassContext ctx;
    driver::LoweredOperator op = driver::lowerOperator(f, options, ctx);

    codegen::LLVMModule vnni = codegen::buildLLVM({op.entry}, op.target);
    const std::string asmText = vnni.assembly();
    QVERIFY2(asmText.find("vpdpbusd") != std::string::npos, "no vpdpbusd in the VNNI kernel");
    QVERIFY2(asmText.find("vpmaddubsw") == std::string::npos, "vpmaddubsw in the VNNI kernel");

    codegen::LLVMModule run = codegen::buildLLVM({op.entry}, op.target);
    const std::string problem = testing::vnniForThisHost(run);
    QVERIFY2(problem.empty(), problem.c_str());
    codegen::JITModule jit(std::move(run));

    std::vector<runtime::NDArray> arrays = topi::makeParamArrays(f), want = topi::makeParamArrays(f);
    std::vector<tir::Arg> refArgs;
    for (size_t i = 0; i < arrays.size(); ++i) {
      tir::fillRandom(arrays[i], 11 + unsigned(i));
      tir::fillRandom(want[i], 11 + unsigned(i));
      refArgs.push_back(want[i]);
    }
    tir::interpret(f, refArgs);
    std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
    jit.getFunction(op.entry->name).call(args);
    QVERIFY2(sameBytes(arrays.back(), want.back()), "the VNNI kernel (vpdpbusd as defined) differs from the interpreter");
  }

  void hostVnniKernelsOnSilicon_data() {
    QTest::addColumn<bool>("conv");
    QTest::newRow("conv") << true;
    QTest::newRow("dense") << false;
  }
  void hostVnniKernelsOnSilicon() {
    QFETCH(bool, conv);
    if (!__builtin_cpu_supports("avx512vnni")) QSKIP("this CPU has no AVX-512 VNNI: the emulated test covers it");
    const tir::PrimFunc f = kernelWith(qdqModel(conv), conv ? "qnn.conv2d_u8s8" : "qnn.dense_u8s8");
    QVERIFY(f.defined());
    driver::OperatorOptions options;
    options.target = "llvm";
    options.schedule = driver::defaultScheduleScript(f);
    transform::PassContext ctx;
    driver::LoweredOperator op = driver::lowerOperator(f, options, ctx);
    codegen::LLVMModule mod = codegen::buildLLVM({op.entry}, op.target);
    const std::string asmText = mod.assembly();
    QVERIFY2(asmText.find("vpdpbusd") != std::string::npos, "the host has VNNI but its int8 kernel has no vpdpbusd");
    QVERIFY2(asmText.find("vpmaddubsw") == std::string::npos, "vpmaddubsw in the host's VNNI kernel");
    codegen::JITModule jit(std::move(mod));

    std::vector<runtime::NDArray> arrays = topi::makeParamArrays(f), want = topi::makeParamArrays(f);
    std::vector<tir::Arg> refArgs;
    for (size_t i = 0; i < arrays.size(); ++i) {
      tir::fillRandom(arrays[i], 11 + unsigned(i));
      tir::fillRandom(want[i], 11 + unsigned(i));
      refArgs.push_back(want[i]);
    }
    tir::interpret(f, refArgs);
    std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
    jit.getFunction(op.entry->name).call(args);
    QVERIFY2(sameBytes(arrays.back(), want.back()), "the host's vpdpbusd kernel differs from the interpreter");
  }
};

QTEST_GUILESS_MAIN(TestVnniEmulated)
#include "test_vnni_emulated.moc"
