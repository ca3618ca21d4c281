// Every topi workload preset, lowered by the pipeline and compiled by both backends (LLVM JIT and
// C through cc), agrees with the preset's plain C++ reference on random inputs.
#include <QtTest>

#include <fstream>

#include "CodegenTestUtil.h"
#include "codegen/CodeGenC.h"
#include "core/tir/HostArrays.h"
#include "core/topi/Workloads.h"
#include "core/transform/Pass.h"
#include "core/transform/Pipeline.h"
#include "runtime/Module.h"

using namespace loom;
using loom::runtime::NDArray;

namespace {
struct Case {
  topi::WorkloadSpec spec;
  tir::PrimFunc packed;
  std::string name;
};

/// Each workload with small parameters (or its defaults when the small ones do not fit).
std::vector<Case> cases() {
  std::vector<Case> out;
  for (const topi::Workload& w : topi::allWorkloads()) {
    topi::ParamMap small;
    for (auto& p : w.params) small[p.name] = std::max(p.minValue, std::min<int64_t>(p.defaultValue, 6));
    topi::WorkloadSpec spec;
    try {
      spec = topi::makeWorkloadSpec(w.name, small);
      topi::buildWorkload(spec);
    } catch (const topi::WorkloadError&) {
      spec = topi::makeWorkloadSpec(w.name);
    }
    std::string name = "wl_" + std::to_string(out.size());
    tir::PrimFunc f = topi::buildWorkload(spec, name);
    transform::PassContext ctx;
    out.push_back({spec, transform::makePackedAPI(transform::lower(f, ctx)), name});
  }
  return out;
}

/// Random inputs, zero outputs, and the reference's outputs for them.
void prepare(const Case& c, std::vector<NDArray>& args, std::vector<NDArray>& want, uint64_t seed) {
  tir::PrimFunc f = topi::buildWorkload(c.spec, c.name);
  args = topi::makeParamArrays(f);
  int numInputs = c.spec.workload->numInputs;
  for (int i = 0; i < numInputs; ++i) tir::fillRandom(args[size_t(i)], seed + uint64_t(i));
  want.clear();
  for (auto& a : args) want.push_back(a.copy());
  topi::runReference(c.spec, want);
}

std::string check(const Case& c, const std::vector<NDArray>& got, const std::vector<NDArray>& want) {
  std::string report;
  for (size_t i = size_t(c.spec.workload->numInputs); i < got.size(); ++i) {
    double err = tir::maxRelError(got[i], want[i]);
    if (!(err <= topi::checkTolerance(c.spec)))
      report += c.spec.str() + " output " + std::to_string(i) + ": max relative error " + std::to_string(err) + "\n";
  }
  return report;
}

runtime::PackedArg arg(const NDArray& a) { return runtime::PackedArg(a); }

void call(const runtime::PackedFunc& fn, const std::vector<NDArray>& args) {
  std::vector<runtime::PackedArg> packed;
  for (auto& a : args) packed.push_back(arg(a));
  fn.call(packed);
}
}  // namespace

class TestWorkloads : public QObject {
  Q_OBJECT
private slots:
  void llvmBackend() {
    std::vector<Case> cs = cases();
    QVERIFY(cs.size() >= 5);
    qInfo("%zu workload presets", cs.size());
    std::vector<tir::PrimFunc> funcs;
    for (auto& c : cs) funcs.push_back(c.packed);
    codegen::JITModule jit(codegen::buildLLVM(funcs, codegen::Target::parse("llvm")));
    for (auto& c : cs) {
      std::vector<NDArray> args, want;
      prepare(c, args, want, 7);
      call(jit.getFunction(c.name), args);
      std::string r = check(c, args, want);
      QVERIFY2(r.empty(), r.c_str());
    }
  }

  void cBackend() {
    std::vector<Case> cs = cases();
    std::vector<tir::PrimFunc> funcs;
    for (auto& c : cs) funcs.push_back(c.packed);
    std::string source = codegen::emitC(funcs);
    QString dir = QDir::tempPath() + "/loom-codegen-wl-" + QString::number(QCoreApplication::applicationPid());
    QDir().mkpath(dir);
    std::string cpath = (dir + "/wl.c").toStdString(), so = (dir + "/wl.so").toStdString();
    std::ofstream(cpath) << source;
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start("cc", {"-std=c11", "-O1", "-fPIC", "-shared", "-fwrapv", "-fexcess-precision=standard", "-Wno-main",
                   "-I" LOOM_SOURCE_DIR "/runtime/include", "-o", QString::fromStdString(so), QString::fromStdString(cpath), "-lm"});
    p.waitForFinished(120000);
    QVERIFY2(p.exitCode() == 0, p.readAll().constData());
    runtime::Module lib = runtime::Module::loadFile(so);
    for (auto& c : cs) {
      std::vector<NDArray> args, want;
      prepare(c, args, want, 11);
      call(lib.getFunction(c.name), args);
      std::string r = check(c, args, want);
      QVERIFY2(r.empty(), r.c_str());
    }
    QDir(dir).removeRecursively();
  }
};

QTEST_APPLESS_MAIN(TestWorkloads)
#include "test_workloads.moc"
