// Loading a packaged model: untar, write kernels.so to a temp file, dlopen, build the executor.
#include "runtime/Package.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "runtime/Params.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/Tar.h"

namespace loom::runtime {

Package loadPackage(const std::string& path) {
  std::map<std::string, std::string> files = readTar(path);
  for (const char* need : {"kernels.so", "graph.json", "params.bin", "metadata.json"})
    if (!files.count(need)) throw RuntimeFailure("package '" + path + "' has no " + need);
  std::string tmpl = (std::filesystem::temp_directory_path() / "loom-kernels-XXXXXX.so").string();
  int fd = mkstemps(tmpl.data(), 3);
  if (fd < 0) throw RuntimeFailure("cannot create a temporary file for the kernels of '" + path + "'");
  const std::string& so = files["kernels.so"];
  bool ok = ::write(fd, so.data(), so.size()) == ssize_t(so.size());
  ::close(fd);
  if (!ok) {
    std::filesystem::remove(tmpl);
    throw RuntimeFailure("cannot write the kernels of '" + path + "' to " + tmpl);
  }
  Module kernels;
  try {
    kernels = Module::loadFile(tmpl);
  } catch (...) {
    std::filesystem::remove(tmpl);
    throw;
  }
  // The library stays mapped after the file is gone.
  std::filesystem::remove(tmpl);
  Package p;
  p.executor = std::make_unique<GraphExecutor>(files["graph.json"], kernels);
  p.executor->setParams(loadParams(files["params.bin"]));
  p.metadata = files["metadata.json"];
  return p;
}

}  // namespace loom::runtime
