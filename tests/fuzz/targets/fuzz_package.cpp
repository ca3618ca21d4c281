// Fuzz target: what the runtime reads from a packaged model before it loads any code: the tar
// reader, the ELF reader (symbols, the embedded data, the file checksum), metadata.json, the params
// blob and the graph executor's plan (graph.json, against an empty kernel module). loadPackage
// itself is not called: it dlopens the kernels, which would run the fuzzer's bytes as code.
#include "FuzzCommon.h"
#include "runtime/Elf.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Package.h"
#include "runtime/Params.h"
#include "runtime/Tar.h"

using namespace loom;
using namespace loom::runtime;

namespace {

int noKernel(LoomValue*, int*, int, LoomValue*, int*, void*) { return 0; }

/// Every function name resolves to a kernel that does nothing: the plan is what is under test.
class StubKernels : public ModuleNode {
public:
  const char* typeKey() const override { return "fuzz-stub"; }
  PackedFunc findFunction(const std::string& name) override { return PackedFunc(noKernel, nullptr, name); }
};

/// The members a package holds, checked as loadPackage checks them (kernels aside).
void readMembers(const std::string& metadata, const std::string& graph, const std::string& params) {
  nlohmann::json j = nlohmann::json::parse(metadata, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("members") && j["members"].is_object())
    for (const auto& [name, m] : j["members"].items())
      if (m.is_object() && m.contains("crc32") && m["crc32"].is_string()) (void)packageChecksum(name);
  std::map<std::string, NDArray> bound;
  fuzz::refusesCleanly([&] { bound = loadParams(params); });
  fuzz::refusesCleanly([&] {
    GraphExecutor ex(graph, Module(std::make_shared<StubKernels>()));
    (void)ex.storageBytes();
    ex.setParams(bound);
    ex.run();
    for (size_t i = 0; i < ex.numOutputs(); ++i) (void)ex.getOutput(i);
  });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1024 * 1024) return -1;
  std::string bytes = fuzz::bytesOf(data, size);
  if (isElf(bytes)) {
    ElfInfo info;
    std::string why;
    if (!readElf(bytes, &info, &why)) return 0;
    (void)libraryChecksumStatus(bytes);
    (void)elfMachineName(info.machine);
    std::string metadata, graph, params;
    bool ok = elfSymbolBytes(bytes, info, kLibraryMetadataSymbol, &metadata) &&
              elfSymbolBytes(bytes, info, kLibraryGraphSymbol, &graph) &&
              elfSymbolBytes(bytes, info, kLibraryParamsSymbol, &params);
    if (ok) readMembers(metadata, graph, params);
    return 0;
  }
  std::map<std::string, std::string> files;
  bool tar = false;
  fuzz::refusesCleanly([&] {
    files = readTarBytes(bytes, "fuzz.tar");
    tar = true;
  });
  // Not a tar: the bytes as each member alone (a graph plan, a params blob).
  if (!tar) {
    readMembers(bytes, bytes, bytes);
    return 0;
  }
  if (files.count("kernels.so")) {
    ElfInfo info;
    std::string why;
    (void)readElf(files["kernels.so"], &info, &why);
  }
  readMembers(files["metadata.json"], files["graph.json"], files["params.bin"]);
  return 0;
}
