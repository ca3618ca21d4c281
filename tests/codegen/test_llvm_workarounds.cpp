// Programs that LLVM itself once miscompiled, compiled by the LLVM backend at every opt level and
// checked against the interpreter on inputs that cover every int8 value.
#include <QtTest>

#include <algorithm>

#include "CodegenTestUtil.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/transform/Pass.h"
#include "core/transform/Pipeline.h"

using namespace loom;
using loom::runtime::NDArray;

namespace {

/// A variable int8 division by a constant, broadcast by a shuffle into an int8 multiply: what
/// fuzz_difftest's TIR seed 126395 reduces to. LLVM 19's x86 backend with AVX2 and the tuning flag
/// fast-variable-perlane-shuffle (every AVX2 CPU: haswell, znver*, x86-64-v3) folds the 2-lane
/// tail of the vectorized loop to a store of zeros (the 16-lane body is right).
const char* kDivShuffleMul = R"(
@T.prim_func
def main(D: T.Buffer((18,), "int8"), R: T.Buffer((36,), "int8"), out: T.Buffer((36,), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t = T.alloc_buffer((18,), "int8")
    for i in range(18):
        with T.block("div"):
            v = T.axis.spatial(18, i)
            t[v] = T.max(D[v] * T.int8(-3), T.int8(1)) // T.int8(3)
    for i in range(36):
        with T.block("mul"):
            v = T.axis.spatial(36, i)
            out[v] = t[v // 2] * R[v]
)";

/// The targets to try: the host at opt levels 0-3, and, where the host has AVX2, CPUs whose tuning
/// has the flag (so the test does not depend on which AVX2 CPU runs it).
std::vector<std::string> targets() {
  std::vector<std::string> out;
  for (int o = 0; o <= 3; ++o) out.push_back("llvm -opt-level=" + std::to_string(o));
  std::vector<std::string> host = codegen::Target::host().attrs;
  auto has = [&](const char* a) { return std::find(host.begin(), host.end(), a) != host.end(); };
  if (has("+avx2") && has("+fma") && has("+bmi2") && has("+movbe")) {
    out.push_back("llvm -mcpu=haswell");
    out.push_back("llvm -mcpu=x86-64-v3");
  }
  return out;
}

void fillAll(NDArray& a, int offset) {
  auto* p = static_cast<int8_t*>(a.data());
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = int8_t(uint8_t(offset + 37 * i));
}

}  // namespace

class TestLLVMWorkarounds : public QObject {
  Q_OBJECT
private slots:
  void int8DivisionShuffledIntoMultiply() {
    tir::PrimFunc f = tir::parseFunc(kDivShuffleMul, "div_shuffle_mul.py");
    // 256 / 18 runs of inputs: D covers every int8 value.
    for (int run = 0; run < 15; ++run) {
      std::vector<NDArray> want;
      for (size_t i = 0; i < f->params.size(); ++i) {
        tir::Buffer b = f->paramBuffer(i);
        NDArray a = NDArray::empty({*tir::asConstInt(b->shape[0])}, runtime::DType{0, 8, 1});
        fillAll(a, run * 18 + int(i) * 101);
        want.push_back(a);
      }
      std::vector<NDArray> ref = {want[0].copy(), want[1].copy(), want[2].copy()};
      tir::interpret(f, std::vector<tir::Arg>(ref.begin(), ref.end()));
      transform::PassContext ctx;
      tir::PrimFunc lowered = transform::lower(f, ctx);
      for (const std::string& target : targets()) {
        runtime::PackedFunc fn = codegen::testutil::jitPacked(lowered, target);
        std::vector<NDArray> got = {want[0].copy(), want[1].copy(), want[2].copy()};
        std::vector<runtime::PackedArg> args(got.begin(), got.end());
        fn.call(args);
        std::string m = tir::mismatchReport(got[2], ref[2], 0, 0);
        QVERIFY2(m.empty(), (target + " (run " + std::to_string(run) + "): " + m).c_str());
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestLLVMWorkarounds)
#include "test_llvm_workarounds.moc"
