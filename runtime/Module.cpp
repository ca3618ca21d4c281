// Modules: the loader table and the shared-library module (dlopen/dlsym).
#include "runtime/Module.h"

#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <mutex>
#include <sys/stat.h>

#include "runtime/RuntimeFailure.h"

namespace loom::runtime {
namespace {

class LibraryModule final : public ModuleNode {
public:
  LibraryModule(void* handle, std::string path) : m_handle(handle), m_path(std::move(path)) {}
  ~LibraryModule() override { dlclose(m_handle); }
  const char* typeKey() const override { return "library"; }

  PackedFunc findFunction(const std::string& name) override {
    // The runtime's own conventions (__loom_module_meta, ...) are data, not functions.
    if (name.empty() || name.rfind("__loom_", 0) == 0) return {};
    void* sym = dlsym(m_handle, name.c_str());
    if (!sym) return {};
    return PackedFunc(reinterpret_cast<LoomBackendPackedCFunc>(sym), nullptr, name,
                      shared_from_this());
  }

  std::optional<std::string> meta() const override {
    auto* text = static_cast<const char*>(dlsym(m_handle, LOOM_MODULE_META_SYMBOL));
    if (!text) return std::nullopt;
    return std::string(text);
  }

  const std::string& path() const { return m_path; }

private:
  void* m_handle;
  std::string m_path;
};

Module loadLibrary(const std::string& path) {
  // An absolute path, so a bare "model.so" means the file here, not a search of system paths.
  std::error_code ec;
  std::string full = std::filesystem::absolute(path, ec).string();
  if (ec) full = path;
  struct stat st {};
  if (stat(full.c_str(), &st) != 0)
    throw RuntimeFailure("cannot load module '" + path + "': no such file");
  if (S_ISDIR(st.st_mode))
    throw RuntimeFailure("cannot load module '" + path + "': it is a directory");
  dlerror();
  void* handle = dlopen(full.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw RuntimeFailure("cannot load module '" + path + "': not a loadable shared library (" +
                         (why ? why : "unknown reason") + ")");
  }
  return Module(std::make_shared<LibraryModule>(handle, full));
}

struct Loaders {
  std::mutex mutex;
  std::map<std::string, std::function<Module(const std::string&)>> byExtension;
};

Loaders& loaders() {
  static Loaders* l = new Loaders();
  return *l;
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Module Module::loadFile(const std::string& path) {
  std::function<Module(const std::string&)> loader;
  {
    Loaders& l = loaders();
    std::lock_guard lock(l.mutex);
    size_t best = 0;
    for (auto& [ext, fn] : l.byExtension)
      if (ext.size() > best && endsWith(path, ext)) {
        best = ext.size();
        loader = fn;
      }
  }
  if (loader) {
    Module m = loader(path);
    if (!m.defined()) throw RuntimeFailure("cannot load module '" + path + "': loader made none");
    return m;
  }
  return loadLibrary(path);
}

void Module::registerLoader(const std::string& extension,
                            std::function<Module(const std::string& path)> loader) {
  if (extension.empty() || !loader)
    throw RuntimeFailure("Module::registerLoader: empty extension or loader");
  Loaders& l = loaders();
  std::lock_guard lock(l.mutex);
  l.byExtension[extension] = std::move(loader);
}

const char* Module::typeKey() const { return m_node ? m_node->typeKey() : "undefined"; }

PackedFunc Module::findFunction(const std::string& name) const {
  if (!m_node) return {};
  if (PackedFunc f = m_node->findFunction(name); f.defined()) return f;
  for (auto& imp : m_node->imports)
    if (PackedFunc f = Module(imp).findFunction(name); f.defined()) return f;
  return {};
}

PackedFunc Module::getFunction(const std::string& name) const {
  if (!m_node) throw RuntimeFailure("getFunction('" + name + "') on an undefined module");
  PackedFunc f = findFunction(name);
  if (!f.defined()) {
    std::string where = m_node->typeKey();
    if (auto* lib = dynamic_cast<LibraryModule*>(m_node.get())) where += " '" + lib->path() + "'";
    throw RuntimeFailure("module " + where + " has no function '" + name + "'");
  }
  return f;
}

std::optional<std::string> Module::meta() const {
  return m_node ? m_node->meta() : std::nullopt;
}

void Module::import(const Module& other) {
  if (!m_node || !other.m_node) throw RuntimeFailure("Module::import: undefined module");
  if (other.m_node == m_node) throw RuntimeFailure("Module::import: a module cannot import itself");
  m_node->imports.push_back(other.m_node);
}

}  // namespace loom::runtime
