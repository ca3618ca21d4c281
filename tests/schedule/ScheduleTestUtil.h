// Shared helpers of the schedule tests: workloads, fixtures, the before/after equivalence check and
// running the `loom` binary.
#pragma once
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <sstream>
#include <string>

#include "core/schedule/Primitives.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"
#include "tests/common/ProcessRun.h"

/// Compares two texts and prints both in full when they differ (QCOMPARE truncates).
#define LOOM_COMPARE_TEXT(got, want)                                                               \
  do {                                                                                             \
    const std::string g_ = (got), w_ = (want);                                                     \
    if (g_ != w_) qWarning("--- got:\n%s\n--- want:\n%s", g_.c_str(), w_.c_str());                 \
    QVERIFY(g_ == w_);                                                                             \
  } while (0)

namespace loom::tir::testing {

/// B = A * 2 (a 16x16 intermediate) feeds C = B + 1.
inline constexpr const char* kTwo = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + T.float32(1)
)";

/// C = A @ B with A 16x8 and B 8x16 (one reduction block "C" over i, j, k).
inline constexpr const char* kMatmul = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j, k in T.grid(16, 16, 8):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)";

/// Gets block "C" and its three loops i, j, k.
inline constexpr const char* kGetLoops = "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n";

/// A script prefix that gets `block` and binds its loops to `names` ("i, j, k").
inline std::string loopsOf(const char* block, const char* names) {
  return std::string("b = sch.get_block(\"") + block + "\")\n" + names + " = sch.get_loops(b)\n";
}

/// The text of an example schedule under examples/schedules/.
inline std::string exampleScript(const char* name) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/examples/schedules/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Exit code (-1: timed out, -2: crashed) and output of one run of the `loom` binary.
using LoomRun = loom::test::ProcessResult;

/// Runs the built `loom` binary with `args` (two minutes at the most).
inline LoomRun runLoom(const QStringList& args) { return loom::test::runLoomBinary(args, 120000); }

/// Writes `text` to `name` in `dir` and returns the file's path.
inline QString writeTempFile(const QTemporaryDir& dir, const QString& name, const QString& text) {
  QString path = dir.filePath(name);
  QFile f(path);
  if (f.open(QIODevice::WriteOnly)) f.write(text.toUtf8());
  return path;
}

inline PrimFunc workload(const std::string& spec) {
  return topi::buildWorkload(topi::parseWorkloadSpec(spec));
}

/// Runs `before` and `after` on the same random inputs and returns the largest relative error
/// over all parameters (outputs differ when the schedule changed the meaning).
inline double maxErrorBetween(const PrimFunc& before, const PrimFunc& after, uint64_t seed = 7) {
  auto a = topi::makeParamArrays(before);
  auto b = topi::makeParamArrays(after);
  std::vector<Arg> argsA, argsB;
  for (size_t i = 0; i < a.size(); ++i) {
    fillRandom(a[i], seed + i);
    fillRandom(b[i], seed + i);
    argsA.push_back(a[i]);
    argsB.push_back(b[i]);
  }
  interpret(before, argsA);
  interpret(after, argsB);
  double err = 0;
  for (size_t i = 0; i < a.size(); ++i)
    err = std::max(err, maxRelError(b[i], a[i]));
  return err;
}

/// Applies `script` to a fresh schedule of `f`; fails the test with the script error otherwise.
inline Schedule scheduled(const PrimFunc& f, const std::string& script) {
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "test.py");
  if (!r.ok) qWarning("%s\n%s", r.message.c_str(), r.detail.c_str());
  return sch;
}

/// Parses `tvmscript`, runs `script` on it and returns the printed result (or the script error).
inline std::string applyAndPrint(const std::string& tvmscript, const std::string& script) {
  PrimFunc f = parseFunc(tvmscript, "input.py");
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "s.py");
  if (!r.ok) return r.message;
  return printFunc(sch.func());
}

/// Runs `script` on `f` and returns the error kind ("" on success) and message.
inline std::pair<std::string, std::string> scriptError(const PrimFunc& f,
                                                       const std::string& script) {
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "s.py");
  return {r.errorKind, r.message};
}

/// Runs `script` on the parsed `tvmscript` and checks the error kind (compared, so a mismatch
/// prints both kinds) and that the message contains `text`.
inline void checkError(const char* tvmscript, const std::string& script, const char* kind,
                       const char* text) {
  auto [k, m] = scriptError(parseFunc(tvmscript), script);
  QCOMPARE(QString::fromStdString(k), QString(kind));
  QVERIFY2(m.find(text) != std::string::npos, m.c_str());
}

} // namespace loom::tir::testing
