// Code generation on threads that nothing orders, as the Studio's job threads are: the first
// compile of the process on one thread, the next on another that only learns of it through a
// hand-off ThreadSanitizer cannot see (Qt's queue inside uninstrumented libQt6Core; a relaxed
// atomic here). Run under TSan by `scripts/test.sh --tsan` (tests/sanitizers/README.md): LLVM makes
// its timer lock on first use, and every optimizeModule builds TimerGroups under it; before the
// lock was made in initializeLLVM's call_once, TSan reported the second thread's lock of a mutex
// the first had allocated (studio.test_export_dialog, rel12). One function: only the first code
// generation of a process makes the lock.
#include <QtTest>

#include <atomic>
#include <thread>

#include "codegen/CodeGenLLVM.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::codegen;

namespace {
const DataType f32 = DataType::Float(32);

/// C[i] = A[i] * 2 + 1 over n elements.
PrimFunc scaleAdd(int n, const std::string& name) {
  Buffer A = makeBuffer("A", f32, {n}), C = makeBuffer("C", f32, {n});
  Var i = makeVar("i");
  Stmt body = forLoop(i, 0, n, ForKind::Serial,
                      bufferStore(C, bufferLoad(A, {i}) * floatImm(f32, 2) + floatImm(f32, 1), {i}));
  return makePrimFunc(name, {A->data, C->data}, {{A->data, A}, {C->data, C}}, body);
}

std::vector<uint8_t> compile(int n) {
  CodeGenOptions opts;
  opts.optimize = true;
  return buildLLVM({scaleAdd(n, "f")}, Target::parse("llvm"), opts).objectCode();
}
}  // namespace

class TestLLVMThreads : public QObject {
  Q_OBJECT
private slots:
  // The process's first code generation on thread A, the second on thread B after A signalled it
  // with a relaxed store (no happens-before for TSan). Both give the same object code.
  void firstCompilesOnUnorderedThreads() {
    std::atomic<bool> aDone{false};
    std::vector<uint8_t> a, b;
    std::thread ta([&] {
      a = compile(64);
      aDone.store(true, std::memory_order_relaxed);
    });
    std::thread tb([&] {
      while (!aDone.load(std::memory_order_relaxed)) std::this_thread::yield();
      b = compile(64);
    });
    ta.join();
    tb.join();
    QVERIFY(!a.empty());
    QVERIFY(a == b);
  }
};

QTEST_GUILESS_MAIN(TestLLVMThreads)
#include "test_llvm_threads.moc"
