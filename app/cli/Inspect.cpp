// `loom inspect`: what a package (.so model library or .tar) holds: metadata, inputs/outputs, kernels
// with their schedules, tuning records, member sizes; read from the file, never loaded or run.
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "app/cli/Commands.h"
#include "core/support/Error.h"
#include "runtime/Elf.h"
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
  CLI::App* sub = app.add_subcommand("inspect", "Show what a compiled package (.so or .tar) holds");
  sub->add_option("package", packagePath(), "The package written by `loom compile`")->required();
  sub->footer("Prints the metadata (format and Loom version, target, opt level, layout), the inputs and outputs\n"
              "(name, dtype, shape), the kernels (which the graph calls, whether the kernels' library exports\n"
              "each, and where each kernel's schedule came from: default, tuned:FILE, ...), the tuning records\n"
              "used, the parameters and the size and checksum of each member. The package is read, not loaded\n"
              "or run. Exit code 1 (with the reasons) when it cannot run on this machine.\n\n"
              "Example:\n"
              "  loom compile examples/models/small_cnn/model.onnx --target llvm \\\n"
              "      --input-shapes \"data:[1,3,16,16]\" --output small_cnn.so\n"
              "  loom inspect small_cnn.so\n"
              "  loom inspect small_cnn.tar");
  return sub;
}

std::string sizeText(size_t n) {
  std::ostringstream s;
  if (n < 1024) s << n << " B";
  else if (n < 1024 * 1024) s << std::fixed << std::setprecision(1) << double(n) / 1024 << " KiB";
  else s << std::fixed << std::setprecision(1) << double(n) / (1024 * 1024) << " MiB";
  return s.str();
}

/// "[1, 3, 224, 224]"; symbolic dims (a dynamic package's "dims") by name: "[N, 3, 16, 16]".
std::string shapeText(const nlohmann::json& shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i) r += (i ? ", " : "") + (shape[i].is_string() ? shape[i].get<std::string>() : shape[i].dump());
  return r + "]";
}

/// A package taken apart: its members (for a library, the embedded data under the member names
/// of a .tar) and what its kernel library exports.
struct Contents {
  std::string kind;                          ///< "tar" or "so"
  std::map<std::string, std::string> files;  ///< members by name
  std::string kernelLibrary;                 ///< "kernels.so", or the library itself
  bool haveKernels = false;                  ///< a kernel library exists to read symbols from
  runtime::ElfInfo elf;                      ///< of the kernel library
  std::string elfWhy;                        ///< why its symbols cannot be read ("" when they can)
  std::vector<std::string> problems;
  std::string fileChecksum;                  ///< a library's whole-file checksum status
};

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) LOOM_THROW(ValueError) << "cannot open package '" << path << "'";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Contents readContents(const std::string& path) {
  Contents c;
  std::string bytes = readBytes(path);
  if (!runtime::isElf(bytes)) {
    c.kind = "tar";
    c.files = runtime::readTar(path);
    if (c.files.empty()) LOOM_THROW(ValueError) << "'" << path << "' holds no files: not a Loom package";
    c.kernelLibrary = "kernels.so";
    if (auto it = c.files.find("kernels.so"); it != c.files.end()) {
      c.haveKernels = true;
      if (!runtime::readElf(it->second, &c.elf, &c.elfWhy)) c.elfWhy = c.elfWhy.empty() ? "unreadable" : c.elfWhy;
    }
    return c;
  }
  c.kind = "so";
  c.kernelLibrary = "the library";
  c.haveKernels = true;
  bool parsed = runtime::readElf(bytes, &c.elf, &c.elfWhy);
  if (bytes.size() < c.elf.requiredBytes)
    LOOM_THROW(ValueError) << "'" << path << "' is truncated ("
                           << (parsed ? std::to_string(bytes.size()) + " bytes; its ELF headers describe " +
                                            std::to_string(c.elf.requiredBytes)
                                      : c.elfWhy)
                           << ")";
  if (!parsed) LOOM_THROW(ValueError) << "'" << path << "' is " << c.elfWhy << ": not a Loom model library";
  if (!c.elf.dynamicSymbols.count(runtime::kLibraryMetadataSymbol))
    LOOM_THROW(ValueError) << "'" << path << "' is not a Loom model library: it exports no "
                           << runtime::kLibraryMetadataSymbol << " (make one with `loom compile MODEL --output model.so`)";
  c.fileChecksum = runtime::libraryChecksumStatus(bytes);
  if (c.fileChecksum.rfind("damaged", 0) == 0) c.problems.push_back("the file is " + c.fileChecksum);
  const std::pair<const char*, const char*> embedded[] = {{runtime::kLibraryMetadataSymbol, "metadata.json"},
                                                          {runtime::kLibraryGraphSymbol, "graph.json"},
                                                          {runtime::kLibraryParamsSymbol, "params.bin"}};
  for (const auto& [sym, member] : embedded) {
    std::string data;
    if (runtime::elfSymbolBytes(bytes, c.elf, sym, &data)) c.files[member] = data;
    else c.problems.push_back(std::string("the symbol ") + sym + " (or " + sym + "_size) is missing or outside the file");
  }
  return c;
}

int inspect() {
  const std::string& path = packagePath();
  Contents c = readContents(path);
  std::map<std::string, std::string>& files = c.files;
  std::cout << "package " << path << " (" << (c.kind == "so" ? "one shared library" : "tar package") << ")\n";
  if (c.kind == "so") std::cout << "file checksum: " << c.fileChecksum << "\n";

  nlohmann::json meta;
  bool haveMeta = false;
  if (auto it = files.find("metadata.json"); it != files.end()) {
    try {
      meta = nlohmann::json::parse(it->second);
      haveMeta = meta.is_object();
    } catch (const nlohmann::json::exception& e) {
      LOOM_THROW(ValueError) << "'" << path << "': the metadata is not valid JSON (" << e.what() << ")";
    }
  }
  // Sizes and checksums the metadata records for the other members.
  nlohmann::json recorded;
  if (haveMeta && meta.contains("members") && meta["members"].is_object()) recorded = meta["members"];
  std::cout << "\nmembers" << (c.kind == "so" ? " (embedded data)" : "") << ":\n";
  size_t total = 0;
  int damaged = 0;
  for (const auto& [name, data] : files) {
    std::cout << "  " << std::left << std::setw(16) << name << std::right << std::setw(12) << sizeText(data.size())
              << "  (" << data.size() << " bytes)";
    if (recorded.contains(name)) {
      const auto& r = recorded[name];
      bool ok = r.is_object() && r.value("bytes", uint64_t(0)) == data.size() &&
                r.value("crc32", std::string()) == runtime::packageChecksum(data);
      std::cout << (ok ? "  crc32 " + runtime::packageChecksum(data) + " ok"
                       : std::string("  DAMAGED (size or crc32 differs from the metadata)"));
      damaged += !ok;
    }
    std::cout << "\n";
    total += data.size();
  }
  std::cout << "  " << std::left << std::setw(16) << "total" << std::right << std::setw(12) << sizeText(total) << "\n";

  std::map<std::string, std::string> scheduleOf;
  if (haveMeta) {
    auto field = [&](const char* k) {
      return meta.contains(k) ? (meta[k].is_string() ? meta[k].get<std::string>() : meta[k].dump()) : std::string("(not given)");
    };
    std::cout << "\nmetadata:\n";
    std::cout << "  format version  "
              << (meta.contains("format_version") ? meta["format_version"].dump() : std::string("1 (not given)"))
              << " (this Loom reads " << runtime::kPackageFormatVersion << ")\n";
    std::cout << "  loom version    " << field("loom_version") << "\n";
    std::cout << "  target          " << field("target") << "\n";
    std::cout << "  opt level       " << field("opt_level") << "\n";
    std::cout << "  layout          " << field("layout") << "\n";
    if (meta.contains("schedules") && meta["schedules"].is_object())
      for (const auto& [k, v] : meta["schedules"].items())
        if (v.is_string()) scheduleOf[k] = v.get<std::string>();
    std::cout << "  tuning records  ";
    if (meta.contains("tuning_records") && meta["tuning_records"].is_array() && !meta["tuning_records"].empty()) {
      std::string list;
      for (const auto& r : meta["tuning_records"]) list += (list.empty() ? "" : ", ") + (r.is_string() ? r.get<std::string>() : r.dump());
      std::cout << list << "\n";
    } else {
      std::cout << "none\n";
    }
    for (const char* kind : {"inputs", "outputs"}) {
      std::cout << "\n" << kind << ":\n";
      if (!meta.contains(kind) || !meta[kind].is_array()) {
        std::cout << "  (not given)\n";
        continue;
      }
      for (const auto& t : meta[kind])
        std::cout << "  " << t.value("name", std::string("?")) << "  " << t.value("dtype", std::string("?"))
                  << shapeText(t.contains("dims") ? t["dims"] : t.value("shape", nlohmann::json::array())) << "\n";
    }
  } else {
    std::cout << "\nmetadata: missing\n";
  }

  std::map<std::string, int> calls;  // kernel -> nodes calling it
  std::vector<std::string> dataDependent;  // "__datadep" nodes, run by the runtime itself
  std::vector<std::string> symbols;        // a dynamic model's symbols, where each is read, bounds
  size_t shapeChecks = 0;
  size_t nodes = 0, storageBytes = 0, storages = 0;
  if (auto it = files.find("graph.json"); it != files.end()) {
    try {
      nlohmann::json g = nlohmann::json::parse(it->second);
      for (const auto& n : g.at("nodes")) {
        ++nodes;
        std::string f = n.at("func").get<std::string>();
        if (f == "__datadep")
          dataDependent.push_back(n.value("name", "") + ": " + n.value("op", "?") + ", " + n.value("symbol", "?") +
                                  " <= " + n.value("bound", "?"));
        else if (f != "__copy") ++calls[f];
      }
      if (g.contains("symbols"))
        for (const auto& s : g.at("symbols")) {
          int in = s.at("input").get<int>();
          std::string input = in >= 0 && size_t(in) < g.at("inputs").size() ? g["inputs"][size_t(in)].value("name", "?") : "?";
          std::string where = "(dimension " + std::to_string(s.at("axis").get<int>()) + " of input '" + input + "')";
          symbols.push_back(s.at("name").get<std::string>() +
                            (s.contains("bound") ? " <= " + std::to_string(s["bound"].get<int64_t>()) + " " + where
                                                 : " " + where + ", unbounded"));
        }
      shapeChecks = g.value("shape_checks", nlohmann::json::array()).size();
      if (!symbols.empty())
        symbols.push_back(g.value("storage_planned_for_bounds", false)
                              ? std::string("storage planned for the bounds")
                              : std::string("storage grows with the shapes (not every symbol is bounded)"));
      for (const auto& s : g.at("storage")) {
        ++storages;
        storageBytes += s.at("bytes").get<size_t>();
      }
    } catch (const nlohmann::json::exception& e) {
      LOOM_THROW(ValueError) << "'" << path << "': graph.json is malformed (" << e.what() << ")";
    }
  }
  if (!symbols.empty()) {
    std::cout << "\nsymbols:\n";
    for (const std::string& s : symbols) std::cout << "  " << s << "\n";
    if (shapeChecks)
      std::cout << "  " << shapeChecks << " dim equalit" << (shapeChecks == 1 ? "y" : "ies")
                << " checked at run time (the compiler could not prove them)\n";
  }
  if (!dataDependent.empty()) {
    std::cout << "\ndata-dependent nodes (" << dataDependent.size()
              << ", run by the runtime; the count <= its bound):\n";
    for (const std::string& d : dataDependent) std::cout << "  " << d << "\n";
  }
  bool symbolsKnown = c.haveKernels && c.elfWhy.empty();
  const std::set<std::string>& exported = c.elf.dynamicFunctions;
  std::set<std::string> all;
  if (symbolsKnown) all = exported;
  for (const auto& [k, n] : calls) all.insert(k);
  std::cout << "\nkernels (" << calls.size() << " called by " << nodes << " graph nodes";
  if (symbolsKnown) std::cout << ", " << exported.size() << " functions exported by " << c.kernelLibrary;
  std::cout << "):\n";
  if (c.haveKernels && !c.elfWhy.empty())
    std::cout << "  (cannot read the symbols of " << c.kernelLibrary << ": " << c.elfWhy << ")\n";
  int missing = 0;
  for (const std::string& k : all) {
    // Runtime helpers the library may export are not kernels.
    if (!calls.count(k) && k.rfind("loom_", 0) == 0) continue;
    std::cout << "  " << k;
    if (calls.count(k)) std::cout << "  (" << calls[k] << (calls[k] == 1 ? " node" : " nodes") << ")";
    if (calls.count(k) && symbolsKnown && !exported.count(k)) {
      std::cout << "  MISSING from " << c.kernelLibrary;
      ++missing;
    }
    if (!calls.count(k)) std::cout << "  (not called by the graph)";
    if (auto s = scheduleOf.find(k); s != scheduleOf.end()) std::cout << "  schedule: " << s->second;
    std::cout << "\n";
  }
  if (nodes) std::cout << "  intermediate storage: " << storages << " buffers, " << sizeText(storageBytes) << "\n";

  if (auto it = files.find("params.bin"); it != files.end()) {
    try {
      auto params = runtime::loadParams(it->second);
      size_t bytes = 0;
      for (const auto& [n, a] : params) bytes += a.byteSize();
      std::cout << "\nparams: " << params.size() << " tensors, " << sizeText(bytes) << "\n";
    } catch (const std::exception& e) {
      c.problems.push_back(std::string("the params cannot be read (") + e.what() + ")");
    }
  }
  std::vector<std::string>& problems = c.problems;
  if (c.kind == "tar") {
    if (!files.count("kernels.so") && files.count("kernels.o"))
      problems.push_back("it holds kernels.o, not linked (no linker for its target when compiled): link it with "
                         "`ld.lld -shared -o kernels.so kernels.o` and add kernels.so");
    else if (!files.count("kernels.so") && files.count("kernels.c"))
      problems.push_back("it holds kernels.c only: build kernels.so with `cc -O2 -fPIC -fwrapv -shared -o kernels.so "
                         "kernels.c -lm` and add it");
    for (const char* need : {"kernels.so", "graph.json", "params.bin", "metadata.json"})
      if (!files.count(need) && !(std::string(need) == "kernels.so" && (files.count("kernels.o") || files.count("kernels.c"))))
        problems.push_back(std::string("it has no ") + need);
  }
  if (symbolsKnown && c.elf.machine != runtime::hostElfMachine())
    problems.push_back("its kernels are built for " + runtime::elfMachineName(c.elf.machine) + ", this machine is " +
                       runtime::elfMachineName(runtime::hostElfMachine()));
  if (haveMeta && meta.contains("format_version") &&
      (!meta["format_version"].is_number_integer() || meta["format_version"].get<int64_t>() != runtime::kPackageFormatVersion))
    problems.push_back("format version " + meta["format_version"].dump() + ", this Loom reads " +
                       std::to_string(runtime::kPackageFormatVersion));
  if (damaged) problems.push_back(std::to_string(damaged) + " member(s) damaged");
  if (missing) problems.push_back(std::to_string(missing) + " kernel(s) missing from " + c.kernelLibrary);
  if (!problems.empty()) {
    std::cout << "\nthis package cannot run here:\n";
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
