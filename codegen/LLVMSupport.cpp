// Process-wide LLVM setup shared by the code generators.
#include "codegen/LLVMSupport.h"

#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Triple.h>

#include "codegen/Target.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/Timer.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace loom::codegen {

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
    // The post-RA list scheduler reorders a block after register allocation. Our kernels are
    // large unrolled blocks (register tiles times unrolled reductions), where it is quadratic
    // in the block size: 35% of the code generation time of a ResNet-18, for no measurable gain
    // on out-of-order x86 cores (bench/README.md, "Compile time"). LOOM_LLVM_OPTIONS adds
    // further LLVM options (e.g. "-post-RA-scheduler=true" to turn it back on for an A/B run).
    //
    // Loop idiom recognition would turn a copy loop between two of a kernel's own buffers (a
    // cache_write's write-back) into a memcpy, which memcpyopt's stack move then merges into
    // one buffer while each access keeps its buffer's TBAA tag: the merged memory no longer
    // aliases itself and live stores are deleted (fuzz_difftest TIR seed 100057). Our copies
    // are vectorized loops already, so the idiom is left off and every buffer keeps its tag.
    std::vector<std::string> args = {"loom", "-post-RA-scheduler=false", "-disable-loop-idiom-memcpy"};
    if (const char* env = std::getenv("LOOM_LLVM_OPTIONS")) {
      std::istringstream in(env);
      for (std::string w; in >> w;) args.push_back(w);
    }
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    llvm::cl::ParseCommandLineOptions(int(argv.size()), argv.data(), "loom code generator\n");
    // LLVM makes its timer lock on first use (a ManagedStatic: an atomic pointer, then a mutex it
    // allocates), and every optimizeModule builds TimerGroups under it (StandardInstrumentations'
    // time-passes handler, made whether or not -time-passes is on), on buildLLVMParts' threads
    // and on the Studio's job threads. LLVM's own publication is sound, but libLLVM is not
    // instrumented: ThreadSanitizer saw a thread lock a mutex another thread had allocated, with
    // no order between them (studio.test_export_dialog, rel12). Made here, the lock exists before
    // this call_once returns, and every thread passes the call_once (which TSan sees) before its
    // first TimerGroup: codegen.test_llvm_threads.
    llvm::TimerGroup first("loom", "Loom code generator");
  });
}

std::vector<std::string> llvmFeatures(const Target& t) {
  std::vector<std::string> out = t.attrs;
  if (!t.isGPU() && llvm::Triple(t.triple).isX86()) out.push_back("-fast-variable-perlane-shuffle");
  return out;
}

std::string llvmFeatureString(const Target& t) {
  std::string s;
  for (auto& a : llvmFeatures(t)) {
    if (!s.empty()) s += ',';
    s += a;
  }
  return s;
}

bool hasFeatures(const Target& t, const std::string& features) {
  static std::mutex mu;
  static std::map<std::string, bool> cache;
  const std::string key = t.triple + "|" + t.cpu + "|" + t.featureString() + "|" + features;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  bool has = false;
  std::string err;
  if (llvm::Triple(t.triple).isX86()) {
    if (const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(t.triple, err)) {
      std::unique_ptr<llvm::MCSubtargetInfo> sti(lt->createMCSubtargetInfo(t.triple, t.cpu, t.featureString()));
      has = sti && sti->checkFeatures(features);
    }
  }
  cache[key] = has;
  return has;
}

}  // namespace loom::codegen
