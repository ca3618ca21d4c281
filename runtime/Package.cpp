// Loading a packaged model: a .tar (untar, check the metadata, write kernels.so to a temp file,
// dlopen) or a model library (check its ELF headers, dlopen, read the embedded data); then the executor.
#include "runtime/Package.h"

#include <array>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "runtime/Elf.h"
#include "runtime/Params.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/Tar.h"

namespace loom::runtime {

namespace {

/// Whether the archive's headers and padded members are followed by a zero block (the end-of-archive
/// marker); a file cut inside the last member's padding or the marker lacks it.
bool hasEndOfArchive(const std::string& bytes) {
  size_t pos = 0;
  while (pos + 512 <= bytes.size()) {
    const char* h = bytes.data() + pos;
    bool zero = true;
    for (int i = 0; i < 512 && zero; ++i) zero = h[i] == 0;
    if (zero) return true;
    uint64_t size = 0;
    for (int i = 124; i < 136 && h[i]; ++i)
      if (h[i] >= '0' && h[i] <= '7') size = size * 8 + uint64_t(h[i] - '0');
    pos += 512 + (size + 511) / 512 * 512;
  }
  return false;
}

std::string readFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeFailure("cannot open package '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The "target" of a metadata text, "" when it has none.
std::string metadataTarget(const std::string& text) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.is_object() && j.contains("target") && j["target"].is_string()) return j["target"].get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return "";
}

/// Refuses code for another machine before it is loaded (dlopen would only say "wrong ELF class"
/// or "invalid ELF header").
void checkMachine(const std::string& what, const ElfInfo& elf, const std::string& target) {
  if (elf.machine == hostElfMachine()) return;
  throw RuntimeFailure(what + " was built for " + elfMachineName(elf.machine) +
                       (target.empty() ? std::string() : " (target \"" + target + "\")") + ", this machine is " +
                       elfMachineName(hostElfMachine()) + ": run it where the CPU is " + elfMachineName(elf.machine) +
                       ", or compile the model again with a --target for this machine");
}

std::map<std::string, std::string> readPackageFiles(const std::string& path, const std::string& bytes) {
  if (bytes.empty()) throw RuntimeFailure("package '" + path + "' is empty");
  if (bytes.size() < 512)
    throw RuntimeFailure("package '" + path + "' is not a tar archive (" + std::to_string(bytes.size()) +
                         " bytes, less than one tar header)");
  std::map<std::string, std::string> files;
  try {
    files = readTarBytes(bytes, path);
  } catch (const RuntimeFailure& e) {
    std::string what = e.what();
    if (what.find("at byte 0 (bad checksum)") != std::string::npos)
      throw RuntimeFailure("package '" + path + "' is not a tar archive (" + e.what() + ")");
    if (what.rfind(path + ": ", 0) == 0) what = what.substr(path.size() + 2);
    throw RuntimeFailure("package '" + path + "' is damaged or truncated: " + what);
  }
  if (!hasEndOfArchive(bytes))
    throw RuntimeFailure("package '" + path + "' is truncated (" + std::to_string(bytes.size()) +
                         " bytes; it ends before the tar end-of-archive marker)");
  if (!files.count("kernels.so") && files.count("kernels.o"))
    throw RuntimeFailure("package '" + path + "' holds kernels.o but no kernels.so: no linker for its target (" +
                         metadataTarget(files.count("metadata.json") ? files["metadata.json"] : "") +
                         ") was found when it was compiled. Link the object on the target machine (`ld.lld -shared "
                         "-o kernels.so kernels.o`, or `cc -shared -o kernels.so kernels.o -lm`) and put kernels.so "
                         "into the package, or compile again where ld.lld is installed");
  if (!files.count("kernels.so") && files.count("kernels.c"))
    throw RuntimeFailure("package '" + path + "' holds kernels.c but no kernels.so: no C compiler was found when it "
                         "was compiled. Build it with `cc -O2 -fPIC -fwrapv -shared -o kernels.so kernels.c -lm` and "
                         "put kernels.so into the package");
  for (const char* need : {"metadata.json", "graph.json", "params.bin", "kernels.so"})
    if (!files.count(need))
      throw RuntimeFailure("package '" + path + "' has no " + need +
                           " (a package holds kernels.so, graph.json, params.bin and metadata.json)");
  return files;
}

void checkMetadata(const std::string& path, const std::string& text, const std::map<std::string, std::string>& files) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure("package '" + path + "': metadata.json is not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw RuntimeFailure("package '" + path + "': metadata.json is not a JSON object");
  // A package written before the field existed is version 1.
  if (j.contains("format_version")) {
    const auto& v = j["format_version"];
    if (!v.is_number_integer() || v.get<int64_t>() != kPackageFormatVersion)
      throw RuntimeFailure("package '" + path + "' has format version " + v.dump() + ", this runtime reads version " +
                           std::to_string(kPackageFormatVersion) + " (recompile the model with a matching `loom compile`)");
  }
  if (!j.contains("members")) return;
  if (!j["members"].is_object()) throw RuntimeFailure("package '" + path + "': metadata.json \"members\" is not an object");
  for (const auto& [name, m] : j["members"].items()) {
    auto it = files.find(name);
    if (it == files.end()) throw RuntimeFailure("package '" + path + "' has no " + name + " (metadata.json lists it)");
    if (!m.is_object() || !m.contains("bytes") || !m.contains("crc32") || !m["bytes"].is_number_unsigned() ||
        !m["crc32"].is_string())
      throw RuntimeFailure("package '" + path + "': metadata.json has a malformed entry for member " + name);
    if (m["bytes"].get<uint64_t>() != it->second.size())
      throw RuntimeFailure("package '" + path + "': " + name + " is damaged (" + std::to_string(it->second.size()) +
                           " bytes, metadata.json says " + m["bytes"].dump() + ")");
    std::string sum = packageChecksum(it->second);
    if (sum != m["crc32"].get<std::string>())
      throw RuntimeFailure("package '" + path + "': " + name + " is damaged (crc32 " + sum + ", metadata.json says " +
                           m["crc32"].get<std::string>() + ")");
  }
}

}  // namespace

std::string packageChecksum(const std::string& bytes) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  c ^= 0xFFFFFFFFu;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", c);
  return hex;
}

namespace {

/// The executor of a package's graph, kernels and params; failures name the package.
Package makePackage(const std::string& path, const std::string& graph, const Module& kernels,
                    const std::string& params, const std::string& metadata, const char* kind) {
  Package p;
  try {
    p.executor = std::make_unique<GraphExecutor>(graph, kernels);
    p.executor->setParams(loadParams(params));
  } catch (const std::exception& e) {
    throw RuntimeFailure("package '" + path + "': " + e.what());
  }
  p.metadata = metadata;
  p.kind = kind;
  return p;
}

Package loadTarPackage(const std::string& path, const std::string& bytes) {
  std::map<std::string, std::string> files = readPackageFiles(path, bytes);
  checkMetadata(path, files["metadata.json"], files);
  const std::string& so = files["kernels.so"];
  ElfInfo elf;
  std::string why;
  if (!readElf(so, &elf, &why))
    throw RuntimeFailure("package '" + path + "': cannot load kernels.so: it is " + why + ", not a shared library");
  checkMachine("package '" + path + "'", elf, metadataTarget(files["metadata.json"]));
  std::string tmpl = (std::filesystem::temp_directory_path() / "loom-kernels-XXXXXX.so").string();
  int fd = mkstemps(tmpl.data(), 3);
  if (fd < 0) throw RuntimeFailure("cannot create a temporary file for the kernels of '" + path + "'");
  bool ok = ::write(fd, so.data(), so.size()) == ssize_t(so.size());
  ::close(fd);
  if (!ok) {
    std::filesystem::remove(tmpl);
    throw RuntimeFailure("cannot write the kernels of '" + path + "' to " + tmpl);
  }
  Module kernels;
  try {
    kernels = Module::loadFile(tmpl);
  } catch (const std::exception& e) {
    std::filesystem::remove(tmpl);
    throw RuntimeFailure("package '" + path + "': cannot load kernels.so: " + e.what());
  }
  // The library stays mapped after the file is gone.
  std::filesystem::remove(tmpl);
  return makePackage(path, files["graph.json"], kernels, files["params.bin"], files["metadata.json"], "tar");
}

/// The CRC-32 of a library's bytes with its checksum symbol's 8 bytes set to the placeholder; ""
/// when the symbol is not in the file.
std::string fileChecksum(std::string bytes, const ElfInfo& elf) {
  auto it = elf.symbols.find(kLibraryChecksumSymbol);
  if (it == elf.symbols.end() || it->second.fileOffset > bytes.size() || bytes.size() - it->second.fileOffset < 8)
    return "";
  std::memcpy(bytes.data() + it->second.fileOffset, kLibraryChecksumPlaceholder, 8);
  return packageChecksum(bytes);
}

Package loadLibraryPackage(const std::string& path, const std::string& bytes) {
  const std::string what = "library '" + path + "'";
  ElfInfo elf;
  std::string why;
  if (!readElf(bytes, &elf, &why)) {
    if (elf.requiredBytes > bytes.size()) throw RuntimeFailure(what + " is truncated (" + why + ")");
    throw RuntimeFailure(what + " is " + why + ", not a Loom model library");
  }
  if (bytes.size() < elf.requiredBytes)
    throw RuntimeFailure(what + " is truncated (" + std::to_string(bytes.size()) + " bytes; its ELF headers describe " +
                         std::to_string(elf.requiredBytes) + ")");
  if (elf.type != 3)
    throw RuntimeFailure(what + " is not a shared library (ELF type " + std::to_string(elf.type) +
                         "; a model library is made by `loom compile MODEL --output model.so`)");
  if (!elf.dynamicSymbols.count(kLibraryMetadataSymbol))
    throw RuntimeFailure(what + " is not a Loom model library: it exports no " + kLibraryMetadataSymbol +
                         " (make one with `loom compile MODEL --output model.so`)");
  // The embedded data, read from the file before anything is loaded.
  std::map<std::string, std::string> blobs;
  for (const char* s : {kLibraryChecksumSymbol, kLibraryMetadataSymbol, kLibraryGraphSymbol, kLibraryParamsSymbol}) {
    for (const std::string& need : {std::string(s), std::string(s) + "_size"})
      if (!elf.dynamicSymbols.count(need))
        throw RuntimeFailure(what + " lacks the symbol " + need + " (a model library exports __loom_checksum, "
                             "__loom_metadata, __loom_graph_json and __loom_params, each with a _size: it is damaged, "
                             "or was not made by `loom compile`)");
    if (!elfSymbolBytes(bytes, elf, s, &blobs[s]))
      throw RuntimeFailure(what + " is damaged: the data of " + s + " lies outside the file");
  }
  std::string stored = blobs[kLibraryChecksumSymbol].substr(0, 8), sum = fileChecksum(bytes, elf);
  // A library linked by hand from the object `loom compile` writes without a linker is not
  // stamped: the metadata's checksums still cover its graph and params.
  if (stored != kLibraryChecksumPlaceholder && stored != sum)
    throw RuntimeFailure(what + " is damaged (crc32 " + sum + " of the file, it was written with " + stored +
                         "): compile the model again");
  const std::string& metadata = blobs[kLibraryMetadataSymbol];
  checkMachine(what, elf, metadataTarget(metadata));
  std::map<std::string, std::string> members = {{"graph.json", blobs[kLibraryGraphSymbol]},
                                                {"params.bin", blobs[kLibraryParamsSymbol]}};
  checkMetadata(path, metadata, members);
  std::error_code ec;
  std::string full = std::filesystem::absolute(path, ec).string();
  if (ec) full = path;
  Module kernels;
  try {
    kernels = Module::loadFile(full);
  } catch (const std::exception& e) {
    throw RuntimeFailure(what + ": " + e.what());
  }
  return makePackage(path, members["graph.json"], kernels, members["params.bin"], metadata, "so");
}

}  // namespace

std::string libraryChecksumStatus(const std::string& bytes) {
  ElfInfo elf;
  std::string why, stored;
  if (!readElf(bytes, &elf, &why) || !elfSymbolBytes(bytes, elf, kLibraryChecksumSymbol, &stored) || stored.size() < 8)
    return "missing";
  stored = stored.substr(0, 8);
  if (stored == kLibraryChecksumPlaceholder) return "not stamped";
  std::string sum = fileChecksum(bytes, elf);
  if (sum == stored) return "ok";
  return "damaged (crc32 " + sum + " of the file, it was written with " + stored + ")";
}

void stampLibraryChecksum(const std::string& path) {
  std::string bytes = readFileBytes(path);
  ElfInfo elf;
  std::string why;
  if (!readElf(bytes, &elf, &why)) throw RuntimeFailure("cannot stamp the checksum of '" + path + "': " + why);
  auto it = elf.symbols.find(kLibraryChecksumSymbol);
  std::string sum = fileChecksum(bytes, elf);
  if (sum.empty() || bytes.compare(size_t(it->second.fileOffset), 8, kLibraryChecksumPlaceholder) != 0)
    throw RuntimeFailure("cannot stamp the checksum of '" + path + "': no " + kLibraryChecksumSymbol +
                         " placeholder in the file");
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(std::streamoff(it->second.fileOffset));
  f.write(sum.data(), 8);
  if (!f) throw RuntimeFailure("cannot write the checksum into '" + path + "'");
}

Package loadPackage(const std::string& path) {
  std::string bytes = readFileBytes(path);
  if (isElf(bytes)) return loadLibraryPackage(path, bytes);
  return loadTarPackage(path, bytes);
}

}  // namespace loom::runtime
