// In-process execution of an LLVMModule through ORC LLJIT, as a runtime::Module of packed functions.
#include "codegen/JITModule.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Support/Error.h>

#include "codegen/LLVMModuleImpl.h"
#include "codegen/LLVMSupport.h"
#include "loom/c_runtime_api.h"

namespace loom::codegen {

namespace {
std::string errorText(llvm::Error e) {
  std::string s;
  llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase& info) { s += info.message(); });
  return s;
}
}  // namespace

class JITModule::Node : public runtime::ModuleNode {
public:
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<std::string> names;
  std::string metaText;

  const char* typeKey() const override { return "llvm-jit"; }

  void* address(const std::string& name) {
    auto sym = jit->lookup(name);
    if (!sym) {
      std::string msg = errorText(sym.takeError());
      LOOM_THROW(CodeGenError) << "JIT: no function '" << name << "' (" << msg << ")";
    }
    return sym->toPtr<void*>();
  }

  runtime::PackedFunc findFunction(const std::string& name) override {
    if (std::find(names.begin(), names.end(), name) == names.end()) return runtime::PackedFunc();
    auto f = reinterpret_cast<LoomBackendPackedCFunc>(address(name));
    return runtime::PackedFunc(f, nullptr, name, shared_from_this());
  }

  std::optional<std::string> meta() const override { return metaText; }
};

JITModule::JITModule(LLVMModule&& m) : m_node(std::make_shared<Node>()) {
  initializeLLVM();
  LLVMModule::Impl& impl = *m.m_impl;
  LOOM_ICHECK(impl.module) << "the LLVM module already moved into a JIT";
  if (!impl.target.isHost())
    LOOM_THROW(CodeGenError) << "cannot run code for '" << impl.target.triple << "' in this process";
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(impl.target.triple)};
  jtmb.setCPU(impl.target.cpu);
  jtmb.addFeatures(llvmFeatures(impl.target));
  jtmb.setCodeGenOptLevel(impl.machine->getOptLevel());
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.getOptions() = impl.machine->Options;
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) LOOM_THROW(CodeGenError) << "JIT: cannot create LLJIT: " << errorText(jit.takeError());
  m_node->jit = std::move(*jit);
  auto& jd = m_node->jit->getMainJITDylib();
  // The runtime's backend functions by address, so that a static runtime needs no export.
  llvm::orc::SymbolMap runtimeSyms;
  auto add = [&](const char* name, void* addr) {
    runtimeSyms[m_node->jit->mangleAndIntern(name)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(addr), llvm::JITSymbolFlags::Exported);
  };
  add("loom_set_last_error", reinterpret_cast<void*>(&loom_set_last_error));
  add("loom_get_last_error", reinterpret_cast<void*>(&loom_get_last_error));
  add("loom_backend_alloc_workspace", reinterpret_cast<void*>(&loom_backend_alloc_workspace));
  add("loom_backend_free_workspace", reinterpret_cast<void*>(&loom_backend_free_workspace));
  add("loom_backend_parallel_launch", reinterpret_cast<void*>(&loom_backend_parallel_launch));
  add("loom_backend_parallel_barrier", reinterpret_cast<void*>(&loom_backend_parallel_barrier));
  add("loom_backend_num_threads", reinterpret_cast<void*>(&loom_backend_num_threads));
  if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(runtimeSyms))))
    LOOM_THROW(CodeGenError) << "JIT: " << errorText(std::move(err));
  // libc and libm (snprintf, expf, ...) from the process.
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      m_node->jit->getDataLayout().getGlobalPrefix());
  if (!gen) LOOM_THROW(CodeGenError) << "JIT: " << errorText(gen.takeError());
  jd.addGenerator(std::move(*gen));

  impl.module->setDataLayout(m_node->jit->getDataLayout());
  llvm::orc::ThreadSafeModule tsm(std::move(impl.module), std::move(impl.context));
  if (auto err = m_node->jit->addIRModule(std::move(tsm)))
    LOOM_THROW(CodeGenError) << "JIT: " << errorText(std::move(err));
  m_node->names = impl.functionNames;
  // Materialize everything now so that errors surface here, not at the first call.
  for (auto& n : m_node->names) m_node->address(n);
  if (auto sym = m_node->jit->lookup(LOOM_MODULE_META_SYMBOL)) m_node->metaText = sym->toPtr<const char*>();
  else llvm::consumeError(sym.takeError());
}

JITModule::~JITModule() = default;
JITModule::JITModule(JITModule&&) noexcept = default;
JITModule& JITModule::operator=(JITModule&&) noexcept = default;

void* JITModule::getAddress(const std::string& name) const { return m_node->address(name); }

runtime::PackedFunc JITModule::getFunction(const std::string& name) const {
  runtime::PackedFunc f = m_node->findFunction(name);
  if (!f.defined()) LOOM_THROW(CodeGenError) << "JIT: no function '" << name << "'";
  return f;
}

runtime::Module JITModule::asModule() const { return runtime::Module(m_node); }

const std::vector<std::string>& JITModule::functionNames() const { return m_node->names; }

}  // namespace loom::codegen
