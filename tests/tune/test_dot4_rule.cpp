// The int8 tuning rule multi-level-tiling-dot4 (core/tune/rule/MultiLevelTilingDot4.cpp) on the
// packed u8 x s8 kernels of a QDQ model (conv and dense): every candidate the default CPU space
// samples keeps the byte dot product intrinsic (a dot4_u8s8 call, widened to the 16 int32 lanes
// of the vectorized output-channel loop), tiles at most the rows the registers hold, replays from
// its trace, computes exactly what the unscheduled kernel computes (interpreter, integer outputs
// equal), and a compiled candidate gives the interpreter's answer.
#include <QtTest>
#include <set>

#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/CompileModel.h"
#include "core/graph/Expr.h"
#include "core/schedule/Analysis.h"
#include "core/schedule/Trace.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/topi/Workloads.h"
#include "core/tune/SpaceGenerator.h"

using namespace loom;
using namespace loom::tune;

namespace {

runtime::NDArray ints(const std::vector<int64_t>& shape, runtime::DType t, int lo, int hi, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, t);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t.bits == 8 && t.code == runtime::DType::UInt) a.as<uint8_t>()[i] = uint8_t(u(rng));
    else if (t.bits == 8) a.as<int8_t>()[i] = int8_t(u(rng));
    else a.as<int32_t>()[i] = int32_t(u(rng));
  }
  return a;
}

graph::Expr scalar(double v, DataType t) { return graph::makeScalar(v, t); }

/// quantize(relu(conv2d(dequantize(x), dequantize(w)))) (3x3, pad 1, 32 -> 32 channels, 8x8) or
/// quantize(dense(dequantize(x), dequantize(w))) (4 x 64 -> 32), u8 data, s8 full-range weights.
graph::Module qdqModel(bool conv) {
  DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
  std::vector<int64_t> xs = conv ? std::vector<int64_t>{1, 32, 8, 8} : std::vector<int64_t>{4, 64};
  std::vector<int64_t> ws = conv ? std::vector<int64_t>{32, 32, 3, 3} : std::vector<int64_t>{32, 64};
  graph::Var x = graph::makeVar("x", graph::tensorType(xs, u8));
  graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(130, u8)});
  graph::Expr dw = graph::makeCall(
      "qnn.dequantize",
      {graph::makeConstant(ints(ws, runtime::DType{runtime::DType::Int, 8, 1}, -127, 127, 3)), scalar(0.003, f32),
       scalar(0, i8)});
  graph::Attrs attrs;
  if (conv) attrs.set("padding", std::vector<int64_t>{1, 1, 1, 1});
  graph::Expr y = graph::makeCall(conv ? "nn.conv2d" : "nn.dense", {dx, dw}, attrs);
  if (conv) y = graph::makeCall("nn.relu", {y});
  graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(0.1, f32), scalar(conv ? 0 : 128, u8)}, {{"out_dtype", u8}});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, q);
  return m;
}

/// The kernel of `m` (opt level 3, NCHWc) whose group holds `op`.
tir::PrimFunc kernelWith(const graph::Module& m, const std::string& op) {
  driver::CompileModelOptions o;
  o.optLevel = 3;
  for (auto& g : driver::extractGroups(m, {}, o))
    for (auto& name : g.ops)
      if (name == op) return g.func;
  return {};
}

/// The dot4 calls of a program: their count and lane counts.
std::multiset<int> dot4Lanes(const tir::Stmt& body) {
  std::multiset<int> lanes;
  tir::postOrderVisit(body, [&](const tir::IRNode* n) {
    if (n->nodeKind != tir::NodeKind::Call) return;
    auto* c = static_cast<const tir::CallNode*>(n);
    if (c->op.rfind("dot4_u8s8", 0) == 0) lanes.insert(c->dtype.lanes());
  });
  return lanes;
}

/// Runs `f` in the interpreter on inputs drawn with `seed` (u8 data, s8 weight words); all arrays.
std::vector<runtime::NDArray> interpretOn(const tir::PrimFunc& f, unsigned seed) {
  std::vector<runtime::NDArray> a = topi::makeParamArrays(f);
  std::vector<tir::Arg> args;
  for (size_t i = 0; i < a.size(); ++i) {
    tir::fillRandom(a[i], seed + i);
    args.push_back(a[i]);
  }
  tir::interpret(f, args);
  return a;
}

bool sameBytes(const runtime::NDArray& a, const runtime::NDArray& b) {
  return a.numel() == b.numel() && a.dtype() == b.dtype() &&
         std::memcmp(a.data(), b.data(), size_t(a.numel()) * size_t(a.dtype().bits / 8)) == 0;
}

/// The register-tile rows the rule allows on this machine's vectors.
int64_t maxRows() { return __builtin_cpu_supports("avx512f") ? 12 * 2 * 2 : 4; }  // rows x chunks x others

}  // namespace

class TestDot4Rule : public QObject {
  Q_OBJECT
private slots:
  void candidatesKeepDot4AndAreExact_data() {
    QTest::addColumn<bool>("conv");
    QTest::newRow("conv 3x3") << true;
    QTest::newRow("dense") << false;
  }
  void candidatesKeepDot4AndAreExact() {
    QFETCH(bool, conv);
    tir::PrimFunc f = kernelWith(qdqModel(conv), conv ? "qnn.conv2d_u8s8" : "qnn.dense_u8s8");
    QVERIFY(f.defined());
    QVERIFY(!dot4Lanes(f->body).empty());
    std::vector<runtime::NDArray> want = interpretOn(f, 7);
    SpaceGenerator space = SpaceGenerator::defaultCpu();
    std::set<std::string> distinct;
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      auto p = space.sample(f, seed);
      QVERIFY2(p.has_value(), qPrintable(QString("seed %1").arg(seed)));
      const tir::PrimFunc& g = p->final.func();
      // The rule claimed the dot-product block: register-tiled ("SSRS"), the intrinsic kept,
      // inside a vectorized loop of 16 lanes (the codegen widens the call).
      const std::string t = p->final.trace().str();
      QVERIFY2(t.find("\"SSRS\"") != std::string::npos, t.c_str());
      QVERIFY2(!dot4Lanes(g->body).empty(), t.c_str());
      bool vectorDot4 = false;
      int64_t tileRows = 1;
      tir::postOrderVisit(g->body, [&](const tir::IRNode* n) {
        if (n->nodeKind != tir::NodeKind::For) return;
        auto* loop = static_cast<const tir::ForNode*>(n);
        if (loop->kind == tir::ForKind::Vectorized && tir::constIntValue(loop->extent) == 16 &&
            !dot4Lanes(loop->body).empty())
          vectorDot4 = true;
        // The unrolled register tile's loops directly around the lanes (S3).
        if (loop->kind == tir::ForKind::Unrolled && !dot4Lanes(loop->body).empty())
          tileRows *= tir::constIntValue(loop->extent).value_or(1 << 20);
      });
      QVERIFY2(vectorDot4, t.c_str());
      QVERIFY2(tileRows <= maxRows(), qPrintable(QString("tile of %1 rows: ").arg(tileRows) + t.c_str()));
      // Exact: every output equal to the unscheduled kernel's.
      std::vector<runtime::NDArray> got = interpretOn(g, 7);
      QVERIFY2(sameBytes(got.back(), want.back()), t.c_str());
      tir::Schedule again(f);
      tir::Trace::fromJson(p->finalJson()).apply(again);
      QVERIFY(tir::structuralEqual(again.func(), g));
      distinct.insert(p->key());
    }
    QVERIFY(distinct.size() >= 3);
  }

  void compiledCandidateIsExact() {
    tir::PrimFunc f = kernelWith(qdqModel(true), "qnn.conv2d_u8s8");
    QVERIFY(f.defined());
    auto p = SpaceGenerator::defaultCpu().sample(f, 3);
    QVERIFY(p.has_value());
    transform::PassContext ctx;
    driver::LoweredOperator op = driver::lowerOperator(p->final.func(), driver::OperatorOptions{}, ctx);
    auto jit = driver::jitOperator(op);
    QVERIFY(jit != nullptr);
    std::vector<runtime::NDArray> arrays = topi::makeParamArrays(f);
    for (size_t i = 0; i < arrays.size(); ++i) tir::fillRandom(arrays[i], 7 + unsigned(i));
    std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
    jit->getFunction(op.lowered->name).call(args);
    std::vector<runtime::NDArray> want = interpretOn(f, 7);
    QVERIFY(sameBytes(arrays.back(), want.back()));
  }
};

QTEST_GUILESS_MAIN(TestDot4Rule)
#include "test_dot4_rule.moc"
