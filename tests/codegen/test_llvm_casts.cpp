// Casts between every pair of element types, scalar and vector, checked against the interpreter.
#include <QtTest>

#include "CodegenTestUtil.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using loom::runtime::NDArray;

namespace {
const char* kTypes[] = {"bool",   "int8",   "int16",  "int32",   "int64",    "uint8",   "uint16",
                        "uint32", "uint64", "float16", "bfloat16", "float32", "float64"};

runtime::DType runtimeType(DataType t) {
  runtime::DType d;
  d.code = uint8_t(t.code());
  d.bits = uint8_t(t.bits());
  d.lanes = 1;
  return d;
}

/// Inputs every target type can hold after the cast: small integers and fractions, no negative
/// value below -1 for unsigned targets (float-to-unsigned of those is undefined).
double sample(int k, DataType from, DataType to) {
  static const double vals[] = {0, 1, -1, 2.5, -2.75, 7, 0.5, -0.25, 3.125, 100, -100, 1.75, 42, -7.5, 0.0625, 12};
  double v = vals[k % 16];
  if (from.isBool()) v = (k % 3) == 0;
  if (from.isIntegral()) v = std::trunc(v);
  if (from.isUInt() && v < 0) v = -v;
  if (to.isUInt() && from.isFloat() && v < 0) v = -v;
  if ((from.bits() == 8 || to.bits() == 8) && std::abs(v) > 100) v = v > 0 ? 99 : -99;
  return v;
}
}  // namespace

class TestLLVMCasts : public QObject {
  Q_OBJECT
private slots:
  void everyPair() {
    // Two modules hold a function per (from, to, lanes).
    struct Case {
      DataType from, to;
      int lanes;
      PrimFunc f;
    };
    std::vector<Case> cases;
    std::vector<PrimFunc> scalarFuncs, vectorFuncs;
    int n = 32;
    for (const char* a : kTypes)
      for (const char* b : kTypes)
        for (int lanes : {1, 8}) {
          DataType ft = *DataType::parse(a), tt = *DataType::parse(b);
          Buffer A = makeBuffer("A", ft, {n}), B = makeBuffer("B", tt, {n});
          Var i = makeVar("i");
          Stmt body;
          if (lanes == 1) {
            body = forLoop(i, 0, n, ForKind::Serial, bufferStore(B, cast(tt, bufferLoad(A, {i})), {i}));
          } else {
            Expr idx = ramp(i * lanes, 1, lanes);
            body = forLoop(i, 0, n / lanes, ForKind::Serial,
                           bufferStore(B, cast(tt.withLanes(lanes), bufferLoad(A, {idx})), {idx}));
          }
          std::string name = std::string("cast_") + a + "_" + b + "_x" + std::to_string(lanes);
          PrimFunc f = makePrimFunc(name, {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
          cases.push_back({ft, tt, lanes, f});
          (lanes == 1 ? scalarFuncs : vectorFuncs).push_back(transform::makePackedAPI(f));
        }
    // Scalar casts unoptimized, vector casts through the optimizer and vector instruction selection.
    codegen::JITModule scalarJit(codegen::buildLLVM(scalarFuncs, codegen::Target::parse("llvm -opt-level=0")));
    codegen::JITModule vectorJit(codegen::buildLLVM(vectorFuncs, codegen::Target::parse("llvm -opt-level=2")));
    for (auto& c : cases) {
      codegen::JITModule& jit = c.lanes == 1 ? scalarJit : vectorJit;
      NDArray a = NDArray::empty({n}, runtimeType(c.from));
      for (int k = 0; k < n; ++k) setElement(a, k, sample(k, c.from, c.to));
      NDArray want = NDArray::empty({n}, runtimeType(c.to)), got = NDArray::empty({n}, runtimeType(c.to));
      interpret(c.f, {a, want});
      jit.getFunction(c.f->name)(a, got);
      // bfloat16 from float64 rounds twice on the way through float32 in compiled code.
      double rtol = c.to.isBFloat16() ? 1e-2 : 0;
      std::string r = mismatchReport(got, want, rtol, 0);
      QVERIFY2(r.empty(), (c.f->name + ": " + r).c_str());
    }
  }

  void halfAndBFloat16Arithmetic() {
    // y = a * b + a in float16 and bfloat16, each op rounded to the type (as the interpreter does).
    for (const char* tn : {"float16", "bfloat16"}) {
      DataType t = *DataType::parse(tn);
      int n = 64;
      Buffer A = makeBuffer("A", t, {n}), B = makeBuffer("B", t, {n}), C = makeBuffer("C", t, {n});
      Var i = makeVar("i");
      Expr idx = ramp(i * 16, 1, 16);
      Stmt body = forLoop(i, 0, n / 16, ForKind::Serial,
                          bufferStore(C, bufferLoad(A, {idx}) * bufferLoad(B, {idx}) + bufferLoad(A, {idx}), {idx}));
      PrimFunc f = makePrimFunc("main", {A->data, B->data, C->data}, {{A->data, A}, {B->data, B}, {C->data, C}}, body);
      NDArray a = NDArray::empty({n}, runtimeType(t)), b = NDArray::empty({n}, runtimeType(t));
      fillRandom(a, 1);
      fillRandom(b, 2);
      NDArray want = NDArray::empty({n}, runtimeType(t)), got = NDArray::empty({n}, runtimeType(t));
      interpret(f, {a, b, want});
      codegen::testutil::jitPacked(f)(a, b, got);
      std::string r = mismatchReport(got, want, 0, 0);
      QVERIFY2(r.empty(), (std::string(tn) + ": " + r).c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestLLVMCasts)
#include "test_llvm_casts.moc"
