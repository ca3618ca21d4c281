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
#include "core/driver/InputShapes.h"
#include "core/support/Error.h"
#include "runtime/Elf.h"
#include "runtime/Package.h"
#include "runtime/Params.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/ShapeExpr.h"
#include "runtime/Tar.h"

namespace loom::cli {

namespace {

std::string& packagePath() {
  static std::string p;
  return p;
}

std::string& shapesText() {
  static std::string s;
  return s;
}

CLI::App* setup(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("inspect", "Show what a compiled package (.so or .tar) holds");
  sub->add_option("package", packagePath(), "The package written by `loom compile`")->required();
  sub->add_option("--input-shapes", shapesText(),
                  "Input shapes to evaluate the package at, e.g. \"data:[2,3,224,224]\" (numbers, or a symbol with a "
                  "value, W=320): the symbols' values, the outputs' shapes and the storage a run needs, with the "
                  "checks `loom run` makes (exit 1 when the shapes do not fit)");
  sub->footer("Prints the metadata (format and Loom version, target, opt level, layout), the inputs and outputs\n"
              "(name, dtype, shape), the kernels (which the graph calls, whether the kernels' library exports\n"
              "each, and where each kernel's schedule came from: default, tuned:FILE, ...), the tuning records\n"
              "used, the parameters and the size and checksum of each member. The package is read, not loaded\n"
              "or run. Exit code 1 (with the reasons) when it cannot run on this machine.\n\n"
              "Example:\n"
              "  loom compile examples/models/small_cnn/model.onnx --target llvm \\\n"
              "      --input-shapes \"data:[1,3,16,16]\" --output small_cnn.so\n"
              "  loom inspect small_cnn.so\n"
              "  loom inspect small_cnn.tar\n"
              "  loom compile examples/models/small_cnn/model.onnx --input-shapes \"data:[N<=8,3,16,16]\" -o dyn.so\n"
              "  loom inspect dyn.so --input-shapes \"data:[3,3,16,16]\"");
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

std::string dimsText(const std::vector<int64_t>& d) {
  std::string r = "[";
  for (size_t i = 0; i < d.size(); ++i) r += (i ? ", " : "") + std::to_string(d[i]);
  return r + "]";
}

/// `loom inspect --input-shapes`: the package's graph evaluated at the given input shapes, read
/// from graph.json (nothing loaded or run). The symbols are bound from the inputs as the executor
/// binds them, and the same checks apply: every input given with its rank, static dims equal,
/// symbols within their bounds and equal where two inputs share one, the shape checks the
/// compiler added. Data-dependent counts are taken at their bounds (the most a run needs).
void printAtShapes(std::ostream& out, const nlohmann::json& g, const std::string& text) {
  std::map<std::string, std::vector<int64_t>> given = driver::concreteInputShapes(text, "inspect");
  const auto& entries = g.at("entries");
  auto symShape = [&](const nlohmann::json& e) {
    std::vector<runtime::ShapeExpr> r;
    if (e.contains("sym_shape"))
      for (const auto& d : e.at("sym_shape"))
        r.push_back(d.is_number_integer() ? runtime::ShapeExpr::constant(d.get<int64_t>()) : runtime::ShapeExpr(d.get<std::string>()));
    else
      for (const auto& d : e.at("shape")) r.push_back(runtime::ShapeExpr::constant(d.get<int64_t>()));
    return r;
  };
  auto exprText = [](const std::vector<runtime::ShapeExpr>& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + s[i].text();
    return r + "]";
  };
  std::set<std::string> names;
  for (const auto& in : g.at("inputs")) names.insert(in.at("name").get<std::string>());
  for (const auto& [name, dims] : given)
    if (!names.count(name)) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
      LOOM_THROW(ValueError) << "--input-shapes names '" << name << "', but the package has no such input (its inputs: "
                             << list << ")";
    }
  std::map<std::string, int64_t> env;
  std::map<std::string, std::string> from;  // symbol -> where its value came from
  if (g.contains("symbols"))
    for (const auto& sy : g.at("symbols")) {
      std::string name = sy.at("name").get<std::string>();
      size_t in = sy.at("input").get<size_t>(), axis = sy.at("axis").get<size_t>();
      std::string input = g.at("inputs").at(in).at("name").get<std::string>();
      auto it = given.find(input);
      if (it == given.end()) LOOM_THROW(ValueError) << "--input-shapes gives no shape for input '" << input << "' (it sets " << name << ")";
      if (axis >= it->second.size()) continue;  // the rank check below names it
      int64_t v = it->second[axis];
      if (sy.contains("bound") && v > sy["bound"].get<int64_t>())
        LOOM_THROW(ValueError) << "input '" << input << "': dimension " << axis << " (" << name << ") is " << v
                               << ", above its bound " << name << " <= " << sy["bound"].get<int64_t>();
      env[name] = v;
      from[name] = "dimension " + std::to_string(axis) + " of input '" + input + "'";
    }
  out << "\nat " << text << ":\n";
  if (!env.empty()) {
    std::string line;
    for (const auto& [n, v] : env) line += (line.empty() ? "" : ", ") + n + " = " + std::to_string(v);
    out << "  symbols  " << line << "\n";
  }
  for (const auto& in : g.at("inputs")) {
    std::string name = in.at("name").get<std::string>();
    const auto& e = entries.at(in.at("entry").get<size_t>());
    std::vector<runtime::ShapeExpr> want = symShape(e);
    auto it = given.find(name);
    if (it == given.end()) LOOM_THROW(ValueError) << "--input-shapes gives no shape for input '" << name << "'";
    const std::vector<int64_t>& dims = it->second;
    if (dims.size() != want.size())
      LOOM_THROW(ValueError) << "input '" << name << "' has rank " << want.size() << " (" << exprText(want) << "), got "
                             << dimsText(dims);
    for (size_t k = 0; k < dims.size(); ++k) {
      int64_t w = want[k].eval(env);
      if (w != dims[k]) {
        std::string why = want[k].isConstant() ? "" : " (" + want[k].text() + ")";
        for (const std::string& sy : want[k].symbols())
          if (from.count(sy)) why += "; " + sy + " = " + std::to_string(env[sy]) + " from " + from[sy];
        LOOM_THROW(ValueError) << "input '" << name << "' expects " << e.at("dtype").get<std::string>() << exprText(want)
                               << ": dimension " << k << " is " << dims[k] << ", but it must be " << w << why;
      }
    }
    out << "  input    " << name << "  " << e.at("dtype").get<std::string>() << dimsText(dims) << "\n";
  }
  if (g.contains("shape_checks"))
    for (const auto& c : g.at("shape_checks")) {
      runtime::ShapeExpr l(c.at("lhs").get<std::string>()), r(c.at("rhs").get<std::string>());
      int64_t a = l.eval(env), b = r.eval(env);
      if (a != b)
        LOOM_THROW(ValueError) << c.at("what").get<std::string>() << ": " << l.text() << " = " << a << " but " << r.text()
                               << " = " << b << " for these inputs; the compiled model needs them equal";
    }
  // Data-dependent counts at their bounds, in node order.
  bool dataDependent = false;
  for (const auto& n : g.at("nodes"))
    if (n.value("func", "") == "__datadep") {
      env[n.at("symbol").get<std::string>()] = runtime::ShapeExpr(n.at("bound").get<std::string>()).eval(env);
      dataDependent = true;
    }
  for (const auto& o : g.at("outputs")) {
    const auto& e = entries.at(o.at("entry").get<size_t>());
    std::vector<int64_t> dims;
    for (const runtime::ShapeExpr& d : symShape(e)) dims.push_back(d.eval(env));
    out << "  output   " << o.at("name").get<std::string>() << "  " << e.at("dtype").get<std::string>()
              << dimsText(dims) << "\n";
  }
  std::vector<size_t> need(g.at("storage").size(), 0);
  for (const auto& e : entries) {
    runtime::DType d;
    if (!runtime::DType::parse(e.at("dtype").get<std::string>(), &d)) LOOM_THROW(ValueError) << "graph.json: bad dtype";
    size_t bytes = d.bytes();
    for (const runtime::ShapeExpr& x : symShape(e)) bytes *= size_t(std::max<int64_t>(x.eval(env), 0));
    bytes += e.value("offset", size_t(0));
    size_t s = e.at("storage").get<size_t>();
    need.at(s) = std::max(need[s], bytes);
  }
  size_t total = 0, planned = 0, grow = 0;
  for (size_t s = 0; s < need.size(); ++s) {
    size_t p = g["storage"][s].at("bytes").get<size_t>();
    total += need[s];
    planned += p;
    grow += need[s] > p;
  }
  out << "  storage  " << sizeText(total) << " used of " << sizeText(planned) << " planned"
            << (grow ? "; a run grows " + std::to_string(grow) + " buffer(s)" : std::string("; no buffer grows"))
            << (dataDependent ? " (data-dependent counts at their bounds)" : "") << "\n";
}

int inspect() {
  const std::string& path = packagePath();
  Contents c = readContents(path);
  std::map<std::string, std::string>& files = c.files;
  // --input-shapes first: shapes that do not fit are an error before anything is printed.
  std::ostringstream atShapes;
  if (!shapesText().empty()) {
    auto it = files.find("graph.json");
    if (it == files.end()) LOOM_THROW(ValueError) << "'" << path << "' has no graph.json to evaluate --input-shapes on";
    try {
      printAtShapes(atShapes, nlohmann::json::parse(it->second), shapesText());
    } catch (const nlohmann::json::exception& e) {
      LOOM_THROW(ValueError) << "'" << path << "': graph.json is malformed (" << e.what() << ")";
    }
  }
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
  std::cout << atShapes.str();
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
