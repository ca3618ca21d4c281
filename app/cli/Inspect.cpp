// `loom inspect`: what a .tar package holds (metadata, inputs/outputs, kernels, member sizes), without loading it.
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>
#include <sstream>

#include "app/cli/Commands.h"
#include "core/support/Error.h"
#include "runtime/Package.h"
#include "runtime/Params.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/Tar.h"

namespace loom::cli {

namespace {

std::string& packagePath() {
  static std::string p;
  return p;
}

CLI::App* setup(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("inspect", "Show what a compiled .tar package holds");
  sub->add_option("package", packagePath(), "The package written by `loom compile`")->required();
  sub->footer("Prints the metadata (format and Loom version, target, opt level), the inputs and outputs "
              "(name, dtype, shape),\nthe kernels (the functions kernels.so exports, and which graph.json "
              "calls), the parameters and\nthe size of each member. The package is read, not loaded or run.\n\n"
              "Example:\n"
              "  loom compile examples/models/small_cnn/model.onnx --target llvm \\\n"
              "      --input-shapes \"data:[1,3,16,16]\" --output small_cnn.tar\n"
              "  loom inspect small_cnn.tar");
  return sub;
}

/// The defined global functions of an ELF64 little-endian shared library's .dynsym; empty with
/// `*why` set when the bytes are not such a library.
std::set<std::string> exportedFunctions(const std::string& so, std::string* why) {
  std::set<std::string> names;
  auto rd = [&](size_t off, size_t n, void* out) {
    if (off > so.size() || n > so.size() - off) return false;
    std::memcpy(out, so.data() + off, n);
    return true;
  };
  if (so.size() < 64 || std::memcmp(so.data(), "\x7f" "ELF", 4) != 0) {
    *why = "not an ELF file";
    return names;
  }
  if (so[4] != 2 || so[5] != 1) {
    *why = "not a 64-bit little-endian ELF file";
    return names;
  }
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  rd(0x28, 8, &shoff);
  rd(0x3a, 2, &shentsize);
  rd(0x3c, 2, &shnum);
  if (shentsize < 64) {
    *why = "malformed ELF section headers";
    return names;
  }
  for (uint16_t s = 0; s < shnum; ++s) {
    size_t h = size_t(shoff) + size_t(s) * shentsize;
    uint32_t type = 0, link = 0;
    uint64_t off = 0, size = 0, entsize = 0;
    if (!rd(h + 4, 4, &type) || type != 11 /* SHT_DYNSYM */) continue;
    rd(h + 0x18, 8, &off);
    rd(h + 0x20, 8, &size);
    rd(h + 0x28, 4, &link);
    rd(h + 0x38, 8, &entsize);
    uint64_t stroff = 0, strsize = 0;
    size_t sh = size_t(shoff) + size_t(link) * shentsize;
    if (!rd(sh + 0x18, 8, &stroff) || !rd(sh + 0x20, 8, &strsize) || entsize < 24) {
      *why = "malformed ELF symbol table";
      return names;
    }
    for (uint64_t e = 0; e + entsize <= size; e += entsize) {
      uint32_t nameOff = 0;
      uint8_t info = 0;
      uint16_t shndx = 0;
      if (!rd(size_t(off + e), 4, &nameOff) || !rd(size_t(off + e + 4), 1, &info) || !rd(size_t(off + e + 6), 2, &shndx))
        break;
      bool global = (info >> 4) == 1 || (info >> 4) == 2, func = (info & 0xf) == 2;
      if (!global || !func || shndx == 0 || nameOff >= strsize || stroff + nameOff >= so.size()) continue;
      const char* p = so.data() + stroff + nameOff;
      names.insert(std::string(p, strnlen(p, size_t(std::min<uint64_t>(strsize - nameOff, so.size() - stroff - nameOff)))));
    }
  }
  return names;
}

std::string sizeText(size_t n) {
  std::ostringstream s;
  if (n < 1024) s << n << " B";
  else if (n < 1024 * 1024) s << std::fixed << std::setprecision(1) << double(n) / 1024 << " KiB";
  else s << std::fixed << std::setprecision(1) << double(n) / (1024 * 1024) << " MiB";
  return s.str();
}

std::string shapeText(const nlohmann::json& shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i) r += (i ? ", " : "") + shape[i].dump();
  return r + "]";
}

int inspect() {
  const std::string& path = packagePath();
  auto files = runtime::readTar(path);
  if (files.empty()) LOOM_THROW(ValueError) << "'" << path << "' holds no files: not a Loom package";
  std::cout << "package " << path << "\n";

  // Sizes and checksums metadata.json records for the other members.
  nlohmann::json recorded;
  if (auto it = files.find("metadata.json"); it != files.end()) {
    try {
      nlohmann::json m = nlohmann::json::parse(it->second);
      if (m.is_object() && m.contains("members") && m["members"].is_object()) recorded = m["members"];
    } catch (const nlohmann::json::exception&) {
      // Reported below.
    }
  }
  std::cout << "\nmembers:\n";
  size_t total = 0;
  int damaged = 0;
  for (const auto& [name, data] : files) {
    std::cout << "  " << std::left << std::setw(16) << name << std::right << std::setw(12) << sizeText(data.size())
              << "  (" << data.size() << " bytes)";
    if (recorded.contains(name)) {
      const auto& r = recorded[name];
      bool ok = r.is_object() && r.value("bytes", uint64_t(0)) == data.size() &&
                r.value("crc32", std::string()) == runtime::packageChecksum(data);
      std::cout << (ok ? "  crc32 " + runtime::packageChecksum(data) + " ok" : std::string("  DAMAGED (size or crc32 differs from metadata.json)"));
      damaged += !ok;
    }
    std::cout << "\n";
    total += data.size();
  }
  std::cout << "  " << std::left << std::setw(16) << "total" << std::right << std::setw(12) << sizeText(total) << "\n";

  if (auto it = files.find("metadata.json"); it != files.end()) {
    nlohmann::json m;
    try {
      m = nlohmann::json::parse(it->second);
    } catch (const nlohmann::json::exception& e) {
      LOOM_THROW(ValueError) << "'" << path << "': metadata.json is not valid JSON (" << e.what() << ")";
    }
    auto field = [&](const char* k) { return m.contains(k) ? (m[k].is_string() ? m[k].get<std::string>() : m[k].dump()) : std::string("(not given)"); };
    std::cout << "\nmetadata:\n";
    std::cout << "  format version  " << (m.contains("format_version") ? m["format_version"].dump() : std::string("1 (not given)"))
              << " (this Loom reads " << runtime::kPackageFormatVersion << ")\n";
    std::cout << "  loom version    " << field("loom_version") << "\n";
    std::cout << "  target          " << field("target") << "\n";
    std::cout << "  opt level       " << field("opt_level") << "\n";
    for (const char* kind : {"inputs", "outputs"}) {
      std::cout << "\n" << kind << ":\n";
      if (!m.contains(kind) || !m[kind].is_array()) {
        std::cout << "  (not given)\n";
        continue;
      }
      for (const auto& t : m[kind])
        std::cout << "  " << t.value("name", std::string("?")) << "  " << t.value("dtype", std::string("?"))
                  << shapeText(t.value("shape", nlohmann::json::array())) << "\n";
    }
  } else {
    std::cout << "\nmetadata: missing (no metadata.json)\n";
  }

  std::map<std::string, int> calls;  // kernel -> nodes calling it
  size_t nodes = 0, storageBytes = 0, storages = 0;
  if (auto it = files.find("graph.json"); it != files.end()) {
    try {
      nlohmann::json g = nlohmann::json::parse(it->second);
      for (const auto& n : g.at("nodes")) {
        ++nodes;
        std::string f = n.at("func").get<std::string>();
        if (f != "__copy") ++calls[f];
      }
      for (const auto& s : g.at("storage")) {
        ++storages;
        storageBytes += s.at("bytes").get<size_t>();
      }
    } catch (const nlohmann::json::exception& e) {
      LOOM_THROW(ValueError) << "'" << path << "': graph.json is malformed (" << e.what() << ")";
    }
  }
  std::set<std::string> exported;
  std::string why;
  bool haveSo = files.count("kernels.so");
  if (haveSo) exported = exportedFunctions(files["kernels.so"], &why);
  std::set<std::string> all = exported;
  for (const auto& [k, n] : calls) all.insert(k);
  std::cout << "\nkernels (" << calls.size() << " called by " << nodes << " graph nodes";
  if (haveSo && why.empty()) std::cout << ", " << exported.size() << " functions exported by kernels.so";
  std::cout << "):\n";
  if (!why.empty()) std::cout << "  (cannot read the symbols of kernels.so: " << why << ")\n";
  int missing = 0;
  for (const std::string& k : all) {
    // Runtime helpers the library may export are not kernels.
    if (!calls.count(k) && k.rfind("loom_", 0) == 0) continue;
    std::cout << "  " << k;
    if (calls.count(k)) std::cout << "  (" << calls[k] << (calls[k] == 1 ? " node" : " nodes") << ")";
    if (calls.count(k) && haveSo && why.empty() && !exported.count(k)) {
      std::cout << "  MISSING from kernels.so";
      ++missing;
    }
    if (!calls.count(k)) std::cout << "  (not called by the graph)";
    std::cout << "\n";
  }
  if (nodes) std::cout << "  intermediate storage: " << storages << " buffers, " << sizeText(storageBytes) << "\n";

  if (auto it = files.find("params.bin"); it != files.end()) {
    auto params = runtime::loadParams(it->second);
    size_t bytes = 0;
    for (const auto& [n, a] : params) bytes += a.byteSize();
    std::cout << "\nparams: " << params.size() << " tensors, " << sizeText(bytes) << "\n";
  }
  std::vector<std::string> problems;
  for (const char* need : {"kernels.so", "graph.json", "params.bin", "metadata.json"})
    if (!files.count(need)) problems.push_back(std::string("it has no ") + need);
  if (damaged) problems.push_back(std::to_string(damaged) + " member(s) damaged");
  if (missing) problems.push_back(std::to_string(missing) + " kernel(s) missing from kernels.so");
  if (!problems.empty()) {
    std::cout << "\nthis package cannot run:\n";
    for (const std::string& p : problems) std::cout << "  " << p << "\n";
    return 1;
  }
  return 0;
}

int run() {
  try {
    return inspect();
  } catch (const runtime::RuntimeFailure& e) {
    LOOM_THROW(ValueError) << e.what();
  }
}

const bool registered = addCommand({setup, run});

}  // namespace

}  // namespace loom::cli
