// LLVM code generation of scalar and vector loops, checked by running the JIT'd code.
#include <QtTest>

#include <cmath>
#include <random>

#include "codegen/CodeGenLLVM.h"
#include "codegen/JITModule.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::codegen;

namespace {
const DataType f32 = DataType::Float(32);

/// C[i] = A[i] + B[i] for i < n, with the pointers as direct parameters.
PrimFunc vectorAdd(int n) {
  Buffer A = makeBuffer("A", f32, {n}), B = makeBuffer("B", f32, {n}), C = makeBuffer("C", f32, {n});
  Var i = makeVar("i");
  Stmt body = forLoop(i, 0, n, ForKind::Serial,
                      bufferStore(C, bufferLoad(A, {i}) + bufferLoad(B, {i}), {i}));
  return makePrimFunc("vadd", {A->data, B->data, C->data}, {{A->data, A}, {B->data, B}, {C->data, C}}, body);
}
}  // namespace

class TestLLVMBasic : public QObject {
  Q_OBJECT
private slots:
  void scalarLoop() {
    LLVMModule m = buildLLVM({vectorAdd(100)}, Target::parse("llvm"));
    QVERIFY(m.llvmIR().find("define") != std::string::npos);
    JITModule jit(std::move(m));
    using Fn = int (*)(float*, float*, float*);
    auto fn = reinterpret_cast<Fn>(jit.getAddress("vadd"));
    alignas(64) static float A[100], B[100], C[100];
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1, 1);
    for (int i = 0; i < 100; ++i) A[i] = d(rng), B[i] = d(rng), C[i] = 0;
    QCOMPARE(fn(A, B, C), 0);
    for (int i = 0; i < 100; ++i) QCOMPARE(C[i], A[i] + B[i]);
  }
};

QTEST_APPLESS_MAIN(TestLLVMBasic)
#include "test_llvm_basic.moc"
