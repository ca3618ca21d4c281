// Data objects through LLVM, C objects through cc, shared libraries through cc (host) or ld.lld (cross).
#include "codegen/SharedLibrary.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <fstream>
#include <sstream>

#include "codegen/LLVMModuleImpl.h"
#include "codegen/LLVMSupport.h"

namespace loom::codegen {

namespace {

/// Runs `program` with `args` (args[0] is the program), returning its exit code; its stdout and
/// stderr go to `*log`.
int runTool(const std::string& program, const std::vector<std::string>& args, std::string* log) {
  llvm::SmallString<128> logPath;
  if (llvm::sys::fs::createTemporaryFile("loom-tool", "log", logPath))
    LOOM_THROW(CodeGenError) << "cannot create a temporary file for the output of " << program;
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  std::string errMsg;
  int rc = llvm::sys::ExecuteAndWait(program, refs, std::nullopt, redirects, 0, 0, &errMsg);
  std::ifstream lf(std::string(logPath.str()));
  std::stringstream ss;
  ss << lf.rdbuf();
  *log = ss.str();
  if (!errMsg.empty()) *log += (log->empty() ? "" : "\n") + errMsg;
  llvm::sys::fs::remove(logPath);
  return rc;
}

std::string commandLine(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

void addDataGlobals(llvm::Module& m, const std::vector<std::pair<std::string, std::string>>& symbols) {
  llvm::LLVMContext& ctx = m.getContext();
  for (const auto& [name, bytes] : symbols) {
    auto* init = llvm::ConstantDataArray::getString(ctx, llvm::StringRef(bytes.data(), bytes.size()), true);
    auto* gv = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::ExternalLinkage, init, name);
    gv->setAlignment(llvm::Align(64));
    auto* size = llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), uint64_t(bytes.size()));
    auto* gs = new llvm::GlobalVariable(m, size->getType(), true, llvm::GlobalValue::ExternalLinkage, size,
                                        name + "_size");
    gs->setAlignment(llvm::Align(8));
  }
}

}  // namespace

void embedData(LLVMModule& module, const std::vector<std::pair<std::string, std::string>>& symbols) {
  LOOM_ICHECK(module.module()) << "the LLVM module moved into a JIT";
  addDataGlobals(*module.module(), symbols);
}

std::string dataObject(const Target& target, const std::vector<std::pair<std::string, std::string>>& symbols) {
  initializeLLVM();
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(target);
  llvm::LLVMContext ctx;
  llvm::Module m("loom_data", ctx);
  m.setTargetTriple(target.triple);
  m.setDataLayout(tm->createDataLayout());
  addDataGlobals(m, symbols);
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    LOOM_THROW(CodeGenError) << "LLVM cannot emit objects for '" << target.str() << "'";
  pm.run(m);
  return std::string(buf.data(), buf.size());
}

std::string findLinker(const Target& target) {
  if (target.isHost()) {
    auto cc = llvm::sys::findProgramByName("cc");
    return cc ? *cc : std::string();
  }
  for (const char* name : {"ld.lld", "ld.lld-20", "ld.lld-19", "ld.lld-18", "ld.lld-17", "ld.lld-16", "ld.lld-15", "ld.lld-14"})
    if (auto p = llvm::sys::findProgramByName(name)) return *p;
  return "";
}

void linkSharedLibrary(const std::vector<std::string>& objects, const Target& target, const std::string& path) {
  std::string linker = findLinker(target);
  if (linker.empty()) {
    if (target.isHost())
      LOOM_THROW(LinkerNotFoundError) << "cannot link '" << path << "': no C compiler 'cc' on PATH "
                                      << "(install one, e.g. `apt-get install gcc`)";
    LOOM_THROW(LinkerNotFoundError) << "cannot link '" << path << "' for " << target.triple
                                    << ": no ld.lld on PATH (install it, e.g. `apt-get install lld`, "
                                    << "or link on the target machine with `cc -shared -o OUT.so OBJ.o -lm`)";
  }
  std::vector<std::string> args = {linker, "-shared", "-o", path};
  args.insert(args.end(), objects.begin(), objects.end());
  if (target.isHost()) args.push_back("-lm");
  std::string log;
  int rc = runTool(linker, args, &log);
  if (rc != 0)
    LOOM_THROW(CodeGenError) << "linking '" << path << "' failed (exit " << rc << "): " << commandLine(args)
                             << (log.empty() ? "" : "\n" + log);
}

std::string findCCompiler() {
  auto cc = llvm::sys::findProgramByName("cc");
  return cc ? *cc : std::string();
}

void compileCObject(const std::string& source, const std::string& object, const std::vector<std::string>& includeDirs) {
  std::string cc = findCCompiler();
  if (cc.empty())
    LOOM_THROW(LinkerNotFoundError) << "cannot compile '" << source << "': no C compiler 'cc' on PATH "
                                    << "(install one, e.g. `apt-get install gcc`)";
  std::vector<std::string> args = {cc, "-std=gnu11", "-O2", "-fPIC", "-fwrapv", "-c", "-o", object, source};
  for (const std::string& d : includeDirs) args.push_back("-I" + d);
  std::string log;
  int rc = runTool(cc, args, &log);
  if (rc != 0)
    LOOM_THROW(CodeGenError) << "compiling '" << source << "' failed (exit " << rc << "): " << commandLine(args)
                             << (log.empty() ? "" : "\n" + log);
}

}  // namespace loom::codegen
