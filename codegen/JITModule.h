// In-process execution of an LLVMModule through ORC LLJIT, as a runtime::Module of packed functions.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "codegen/CodeGenLLVM.h"
#include "runtime/Module.h"

namespace loom::codegen {

/// The compiled functions of one LLVMModule, loaded into this process. The runtime's backend
/// functions (loom_set_last_error, loom_backend_*) and libc/libm resolve against the process.
/// Functions handed out keep the JIT alive.
class JITModule {
public:
  /// Compiles `m` (which moves in) for the host. Throws CodeGenError when the module's target is
  /// not the host or LLVM fails to materialize it.
  explicit JITModule(LLVMModule&& m);
  ~JITModule();
  JITModule(JITModule&&) noexcept;
  JITModule& operator=(JITModule&&) noexcept;

  /// The address of function `name` (any calling convention); throws CodeGenError when missing.
  void* getAddress(const std::string& name) const;
  /// Packed function `name` (one that went through make-packed-api), callable with NDArrays and
  /// scalars: `f(a, b, int64_t(n))`; a failure throws RuntimeFailure "<name>: <message>".
  runtime::PackedFunc getFunction(const std::string& name) const;
  /// This JIT as a runtime::Module (type key "llvm-jit").
  runtime::Module asModule() const;
  const std::vector<std::string>& functionNames() const;

private:
  class Node;
  std::shared_ptr<Node> m_node;
};

}  // namespace loom::codegen
