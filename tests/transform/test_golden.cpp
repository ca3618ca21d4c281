// Golden-text tests: a scheduled program in, the printed function after one pass out.
#include <QtTest>

#include "core/tir/Printer.h"
#include "core/transform/FlattenBuffers.h"
#include "core/transform/LoopPartition.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/Pass.h"
#include "core/transform/StorageRewrite.h"
#include "core/transform/Vectorize.h"
#include "tests/transform/Programs.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {
/// The printed function without the two header lines every function starts with.
std::string body(const PrimFunc& f) {
  std::string t = printFunc(f);
  size_t at = t.find("@T.prim_func");
  return at == std::string::npos ? t : t.substr(at);
}
}  // namespace

#define COMPARE_TEXT(actual, expected)                                                           \
  do {                                                                                           \
    std::string a_ = (actual), e_ = (expected);                                                  \
    QVERIFY2(a_ == e_, ("got:\n" + a_ + "\nwant:\n" + e_).c_str());                              \
  } while (0)

class TestGolden : public QObject {
  Q_OBJECT
private slots:
  void lowerBlocks_() {
    COMPARE_TEXT(body(lowerBlocks(matmulSplit(4, 10, 3, 4))), R"(@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), B: T.Buffer((3, 10), "float32"), C: T.Buffer((4, 10), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j_0, k, j_1 in T.grid(4, 3, 3, 4):
        if j_0 * 4 + j_1 < 10:
            if k == 0:
                C[i, j_0 * 4 + j_1] = T.float32(0)
            C[i, j_0 * 4 + j_1] = C[i, j_0 * 4 + j_1] + A[i, k] * B[k, j_0 * 4 + j_1]
)");
  }

  void flattenAndStorageRewrite() {
    PrimFunc f = flattenBuffers(lowerBlocks(threeStages(2, 3)));
    COMPARE_TEXT(body(rewriteStorage(f)), R"(@T.prim_func
def main(A: T.Buffer((2, 3), "float32"), C: T.Buffer((2, 3), "float32")):
    T.func_attr({"global_symbol": "main"})
    A_1 = T.decl_buffer((6,), "float32", data=A)
    C_1 = T.decl_buffer((6,), "float32", data=C)
    T1 = T.allocate([6], "float32", "global")
    T2 = T.allocate([6], "float32", "global")
    T1_1 = T.decl_buffer((6,), "float32", data=T1)
    T2_1 = T.decl_buffer((6,), "float32", data=T2)
    T3 = T.decl_buffer((6,), "float32", data=T1)
    for i, j in T.grid(2, 3):
        T1_1[i * 3 + j] = A_1[i * 3 + j] + T.float32(1)
    for i_1, j_1 in T.grid(2, 3):
        T2_1[i_1 * 3 + j_1] = T1_1[i_1 * 3 + j_1] * T.float32(2)
    for i_2, j_2 in T.grid(2, 3):
        T3[i_2 * 3 + j_2] = T2_1[i_2 * 3 + j_2] - A_1[i_2 * 3 + j_2]
    for i_3, j_3 in T.grid(2, 3):
        C_1[i_3 * 3 + j_3] = T3[i_3 * 3 + j_3] * T3[i_3 * 3 + j_3]
)");
  }

  void loopPartition() {
    PrimFunc f = flattenBuffers(lowerBlocks(elementwiseSplit(20, 8, ForKind::Serial, ForKind::Serial)));
    COMPARE_TEXT(body(partitionLoops(f)), R"(@T.prim_func
def main(A: T.Buffer((20,), "float32"), B: T.Buffer((20,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i_0, i_1 in T.grid(2, 8):
        B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * T.float32(2) + T.float32(1)
    for i_1_1 in range(4):
        B[2 * 8 + i_1_1] = A[2 * 8 + i_1_1] * T.float32(2) + T.float32(1)
    for i_1_tail in T.serial(4, 8):
        if 2 * 8 + i_1_tail < 20:
            B[2 * 8 + i_1_tail] = A[2 * 8 + i_1_tail] * T.float32(2) + T.float32(1)
)");
  }

  void vectorize() {
    PassContext ctx;
    PrimFunc f = flattenBuffers(lowerBlocks(elementwiseSplit(16, 8, ForKind::Parallel, ForKind::Vectorized)));
    COMPARE_TEXT(body(vectorizeLoops(f, ctx)), R"(@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i_0 in T.parallel(2):
        B[T.Ramp(i_0 * 8, 1, 8)] = A[T.Ramp(i_0 * 8, 1, 8)] * T.Broadcast(T.float32(2), 8) + T.Broadcast(T.float32(1), 8)
)");
  }
};

QTEST_APPLESS_MAIN(TestGolden)
#include "test_golden.moc"
