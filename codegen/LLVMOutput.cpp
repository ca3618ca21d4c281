// LLVMModule's outputs: the optimization pipeline, IR text, assembly with loop lines, objects, .so files.
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/LLVMModuleImpl.h"
#include "codegen/LLVMSupport.h"

namespace loom::codegen {

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const Target& t) {
  initializeLLVM();
  std::string err;
  const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!lt) LOOM_THROW(TargetError) << "unknown target triple '" << t.triple << "': " << err;
  llvm::TargetOptions opts;
  // a * b + c may become one fused multiply-add (as in TVM): one rounding instead of two.
  opts.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  if (t.fastMath) {
    opts.UnsafeFPMath = true;
    opts.NoSignedZerosFPMath = true;
  }
  llvm::CodeGenOptLevel level = t.optLevel == 0   ? llvm::CodeGenOptLevel::None
                                : t.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                : t.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                                  : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(lt->createTargetMachine(t.triple, t.cpu, llvmFeatureString(t), opts,
                                                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm) LOOM_THROW(TargetError) << "LLVM cannot create a target machine for '" << t.str() << "'";
  return tm;
}

void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm, int optLevel) {
  // LLVM's standard instrumentation makes its own options work on our pipeline when given in
  // LOOM_LLVM_OPTIONS: -time-passes (a report per module on stderr), -print-before=PASS /
  // -print-after=PASS with -ir-dump-directory=DIR, -filter-print-funcs=NAME. Its TimerGroups need
  // LLVM's timer lock made by initializeLLVM first (LLVMSupport.cpp).
  initializeLLVM();
  llvm::PassInstrumentationCallbacks pic;
  llvm::StandardInstrumentations si(m.getContext(), /*DebugLogging=*/false);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = optLevel >= 2;
  pto.SLPVectorization = optLevel >= 2;
  pto.LoopUnrolling = optLevel >= 1;
  si.registerCallbacks(pic, &mam);
  llvm::PassBuilder pb(&tm, pto, std::nullopt, &pic);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = optLevel == 0 ? pb.buildO0DefaultPipeline(level)
                                              : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

namespace {

std::string emitFile(const LLVMModule::Impl& impl, llvm::CodeGenFileType type) {
  LOOM_ICHECK(impl.module) << "the LLVM module moved into a JIT";
  // Machine code emission changes the IR it runs on, so it works on a copy.
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*impl.module);
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (impl.machine->addPassesToEmitFile(pm, os, nullptr, type))
    LOOM_THROW(CodeGenError) << "LLVM cannot emit " << (type == llvm::CodeGenFileType::AssemblyFile ? "assembly" : "objects")
                             << " for '" << impl.target.str() << "'";
  pm.run(*copy);
  return std::string(buf.data(), buf.size());
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

LLVMModule::LLVMModule(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
LLVMModule::LLVMModule(LLVMModule&&) noexcept = default;
LLVMModule& LLVMModule::operator=(LLVMModule&&) noexcept = default;
LLVMModule::~LLVMModule() = default;

const Target& LLVMModule::target() const { return m_impl->target; }
const std::vector<std::string>& LLVMModule::functionNames() const { return m_impl->functionNames; }
llvm::Module* LLVMModule::module() const { return m_impl->module.get(); }

std::string LLVMModule::llvmIR() const {
  LOOM_ICHECK(m_impl->module) << "the LLVM module moved into a JIT";
  std::string s;
  llvm::raw_string_ostream os(s);
  m_impl->module->print(os, nullptr);
  return os.str();
}

std::vector<AsmLine> LLVMModule::assemblyWithLines() const {
  std::string text = emitFile(*m_impl, llvm::CodeGenFileType::AssemblyFile);
  std::vector<AsmLine> out;
  std::istringstream is(text);
  std::string raw;
  int current = 0;
  bool inDebugSection = false;
  while (std::getline(is, raw)) {
    std::string t = trim(raw);
    if (t.empty()) continue;
    if (startsWith(t, ".section")) {
      inDebugSection = t.find(".debug_") != std::string::npos;
      if (inDebugSection) continue;
    } else if (startsWith(t, ".text") || startsWith(t, ".data") || startsWith(t, ".bss")) {
      inDebugSection = false;
    }
    if (inDebugSection) continue;
    if (startsWith(t, ".loc")) {
      // .loc FILE LINE COL ...
      std::istringstream ls(t.substr(4));
      int file = 0, line = 0;
      ls >> file >> line;
      current = line;
      continue;
    }
    if (startsWith(t, ".file") || startsWith(t, ".cfi_") || startsWith(t, ".Ltmp") ||
        startsWith(t, "#DEBUG_VALUE") || startsWith(t, "// DEBUG_VALUE"))
      continue;
    bool isLabel = t.back() == ':';
    bool isDirective = t[0] == '.' || t[0] == '#' || startsWith(t, "//");
    AsmLine l;
    l.text = raw;
    l.tirLine = (isLabel || isDirective) ? 0 : current;
    out.push_back(std::move(l));
  }
  return out;
}

std::string LLVMModule::assembly() const {
  std::string s;
  for (auto& l : assemblyWithLines()) {
    s += l.text;
    s += '\n';
  }
  return s;
}

std::vector<uint8_t> LLVMModule::objectCode() const {
  std::string bytes = emitFile(*m_impl, llvm::CodeGenFileType::ObjectFile);
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

void LLVMModule::writeObject(const std::string& path) const {
  std::string bytes = emitFile(*m_impl, llvm::CodeGenFileType::ObjectFile);
  std::ofstream f(path, std::ios::binary);
  if (!f) LOOM_THROW(CodeGenError) << "cannot write object file '" << path << "'";
  f.write(bytes.data(), std::streamsize(bytes.size()));
  if (!f) LOOM_THROW(CodeGenError) << "cannot write object file '" << path << "'";
}

void LLVMModule::writeSharedLibrary(const std::string& path) const {
  if (!m_impl->target.isHost())
    LOOM_THROW(CodeGenError) << "cannot link a shared library for '" << m_impl->target.triple
                             << "' on this machine (write an object file instead)";
  llvm::SmallString<128> objPath;
  if (auto ec = llvm::sys::fs::createTemporaryFile("loom", "o", objPath))
    LOOM_THROW(CodeGenError) << "cannot create a temporary object file: " << ec.message();
  writeObject(std::string(objPath));
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    llvm::sys::fs::remove(objPath);
    LOOM_THROW(CodeGenError) << "cannot link '" << path << "': no C compiler 'cc' on PATH";
  }
  std::string errMsg;
  llvm::SmallString<128> logPath;
  llvm::sys::fs::createTemporaryFile("loom-link", "log", logPath);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::vector<llvm::StringRef> args = {*cc, "-shared", "-o", path, objPath, "-lm"};
  int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, redirects, 0, 0, &errMsg);
  std::string log;
  {
    std::ifstream lf(std::string(logPath.str()));
    std::stringstream ss;
    ss << lf.rdbuf();
    log = ss.str();
  }
  llvm::sys::fs::remove(objPath);
  llvm::sys::fs::remove(logPath);
  if (rc != 0)
    LOOM_THROW(CodeGenError) << "linking '" << path << "' with cc failed (exit " << rc << ")"
                             << (errMsg.empty() ? "" : ": " + errMsg) << (log.empty() ? "" : "\n" + log);
}

}  // namespace loom::codegen
