// Module: a set of packed functions loaded from a shared library (and, later, packaged models).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/PackedFunc.h"

namespace loom::runtime {

class Module;

/// What a module is. The runtime implements a loaded shared library; the graph executor and
/// the packaged-model format add their own kinds by subclassing and registering a loader.
class ModuleNode : public std::enable_shared_from_this<ModuleNode> {
public:
  virtual ~ModuleNode() = default;
  /// "library", ...
  virtual const char* typeKey() const = 0;
  /// The function called `name`, or an undefined PackedFunc when this module has none (imports
  /// are searched by Module, not here). The function keeps the module alive.
  virtual PackedFunc findFunction(const std::string& name) = 0;
  /// The module's metadata text, when it has some.
  virtual std::optional<std::string> meta() const { return std::nullopt; }

  /// Modules this one depends on; Module::getFunction searches them after this one.
  std::vector<std::shared_ptr<ModuleNode>> imports;
};

/// A handle to a ModuleNode; copies share it.
class Module {
public:
  Module() = default;
  explicit Module(std::shared_ptr<ModuleNode> node) : m_node(std::move(node)) {}

  /// Loads `path` with the loader registered for its extension; a file with no registered
  /// extension (".so" included) loads as a shared library with dlopen. Throws RuntimeFailure
  /// naming the path for a missing file or a file that is not a loadable library.
  static Module loadFile(const std::string& path);
  /// Makes loadFile hand files ending in `extension` (".tar", ...) to `loader`.
  static void registerLoader(const std::string& extension,
                             std::function<Module(const std::string& path)> loader);

  bool defined() const { return m_node != nullptr; }
  ModuleNode* node() const { return m_node.get(); }
  const char* typeKey() const;
  /// The function called `name` here or in an import; throws RuntimeFailure when none has it.
  PackedFunc getFunction(const std::string& name) const;
  /// Like getFunction, but an undefined PackedFunc when missing.
  PackedFunc findFunction(const std::string& name) const;
  std::optional<std::string> meta() const;
  void import(const Module& other);

private:
  std::shared_ptr<ModuleNode> m_node;
};

}  // namespace loom::runtime
