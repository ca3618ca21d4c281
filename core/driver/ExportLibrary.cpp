// exportLibrary / exportPackage: kernels built for the model's target (LLVM, cross, or C through cc),
// linked with the graph, params and metadata embedded (.so) or packed beside them (.tar).
#include "core/driver/ExportLibrary.h"

#include <thread>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "codegen/CodeGenC.h"
#include "codegen/CodeGenLLVM.h"
#include "codegen/SharedLibrary.h"
#include "codegen/Target.h"
#include "runtime/AtomicFile.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/Package.h"
#include "runtime/Params.h"
#include "runtime/Tar.h"

namespace loom::driver {

namespace fs = std::filesystem;

namespace {

/// A private temporary directory, removed with its files on scope exit.
class TempDir {
public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "loom-export-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) LOOM_THROW(Error) << "cannot create a temporary directory in " << fs::temp_directory_path();
    m_path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (m_path / name).string(); }

private:
  fs::path m_path;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) LOOM_THROW(Error) << "cannot read '" << path << "'";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const std::string& path, const std::string& bytes) {
  try {
    runtime::writeFileAtomically(path, bytes);  // names the cause: a full disk, a size limit
  } catch (const runtime::RuntimeFailure& e) {
    LOOM_THROW(Error) << e.what();
  }
}

void report(const ExportOptions& o, const std::string& what, int done, int total) {
  if (o.progress) o.progress(what, done, total);
}

/// The text of loom/c_runtime_api.h, for a kernels.c that compiles without Loom's headers; empty
/// when it cannot be found ($LOOM_INCLUDE_DIR, ../include next to the running program, the
/// source tree this Loom was built from).
std::string runtimeHeaderText() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("LOOM_INCLUDE_DIR")) dirs.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "include");
#ifdef LOOM_RUNTIME_INCLUDE_DIR
  dirs.emplace_back(LOOM_RUNTIME_INCLUDE_DIR);
#endif
  for (const fs::path& d : dirs) {
    fs::path h = d / "loom" / "c_runtime_api.h";
    if (fs::is_regular_file(h, ec)) return readFile(h.string());
  }
  return "";
}

/// codegen::emitC's source with the runtime header pasted in place of its #include, so `cc -c
/// kernels.c` needs no include path.
std::string selfContainedC(const CompiledModel& model) {
  std::string src = codegen::emitC(model.kernels);
  const std::string include = "#include \"loom/c_runtime_api.h\"";
  std::string header = runtimeHeaderText();
  size_t at = src.find(include);
  if (header.empty() || at == std::string::npos) return src;
  return src.substr(0, at) + "/* ---- loom/c_runtime_api.h ---- */\n" + header + "/* ---- end of loom/c_runtime_api.h ---- */" +
         src.substr(at + include.size());
}

codegen::Target llvmTarget(const CompiledModel& model) {
  codegen::Target t = codegen::Target::parse(model.target);
  t.optLevel = std::clamp(model.optLevel, 0, 3);
  return t;
}

/// Threads for LLVM's work in an export: one per core (at most 4), one when the objects could not
/// be linked into one library (no linker for the target: a single object is handed over).
size_t codegenParts(const CompiledModel& model) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (codegen::findLinker(llvmTarget(model)).empty()) return 1;
  return std::clamp<size_t>(cores ? cores : 1, 1, 4);
}

/// The model's kernels as LLVM modules built on several threads (the first one holds the module
/// description), with the IR and assembly kept when asked.
std::vector<codegen::LLVMModule> buildLLVMKernels(const CompiledModel& model, const ExportOptions& o, ExportResult& r) {
  report(o, "generating code (" + std::to_string(model.kernels.size()) + " kernels)", 0, 1);
  codegen::CodeGenOptions cg;
  cg.debugInfo = false;
  std::vector<codegen::LLVMModule> mods = codegen::buildLLVMParts(model.kernels, llvmTarget(model), cg, codegenParts(model));
  for (const codegen::LLVMModule& mod : mods) {
    if (o.keepLLVMIR) r.llvmIR += mod.llvmIR();
    if (o.keepAssembly) r.assembly += mod.assembly();
  }
  report(o, "generated code", 1, 1);
  return mods;
}

/// Writes each module's object (emitted in parallel) to DIR/STEM{i}.o; returns the paths.
std::vector<std::string> writeObjects(const std::vector<codegen::LLVMModule>& mods, TempDir& tmp, const std::string& stem) {
  std::vector<std::vector<uint8_t>> code = codegen::objectCodeOfParts(mods);
  std::vector<std::string> paths;
  for (size_t i = 0; i < code.size(); ++i) {
    paths.push_back(tmp.file(stem + (i ? std::to_string(i) : std::string()) + ".o"));
    writeFile(paths.back(), std::string(code[i].begin(), code[i].end()));
  }
  return paths;
}

/// metadata.json's text with the sizes and checksums of `members` and the container kind.
std::string metadataWith(const CompiledModel& model, const std::vector<std::pair<std::string, std::string>>& members,
                         const char* container) {
  nlohmann::json meta = nlohmann::json::parse(packageMetadata(model));
  meta["container"] = container;
  // Sizes and checksums let the runtime refuse a damaged member instead of running it.
  for (const auto& [name, bytes] : members)
    meta["members"][name] = {{"bytes", bytes.size()}, {"crc32", runtime::packageChecksum(bytes)}};
  return meta.dump(2);
}

void checkTarget(const CompiledModel& model) {
  if (isCTarget(model.target)) return;
  codegen::Target t = codegen::Target::parse(model.target);
  if (t.isGPU())
    LOOM_THROW(UnsupportedError) << "exporting a model for '" << model.target
                                 << "' is not supported (export supports llvm targets and c)";
}

}  // namespace

bool isCTarget(const std::string& target) {
  std::istringstream is(target);
  std::string w;
  is >> w;
  return w == "c";
}

std::string canonicalTarget(const std::string& target) {
  if (isCTarget(target)) {
    std::istringstream is(target);
    std::string w;
    is >> w;
    if (is >> w) LOOM_THROW(TargetError) << "the c target takes no options, got '" << w << "' in \"" << target << "\"";
    return "c";
  }
  return codegen::Target::parse(target).str();
}

codegen::LLVMModule buildModelKernels(const CompiledModel& model) {
  codegen::CodeGenOptions cg;
  cg.debugInfo = false;
  return codegen::buildLLVM(model.kernels, llvmTarget(model), cg);
}

ExportResult exportLibrary(const CompiledModel& model, const std::string& path, const ExportOptions& o) {
  checkTarget(model);
  ExportResult r;
  std::string graph = model.graphJson, params = runtime::saveParams(model.params);
  std::string meta = metadataWith(model, {{"graph.json", graph}, {"params.bin", params}}, "so");
  std::vector<std::pair<std::string, std::string>> data = {{runtime::kLibraryChecksumSymbol, runtime::kLibraryChecksumPlaceholder},
                                                           {runtime::kLibraryMetadataSymbol, meta},
                                                           {runtime::kLibraryGraphSymbol, graph},
                                                           {runtime::kLibraryParamsSymbol, params}};
  TempDir tmp;
  std::vector<std::string> objects;
  codegen::Target linkTarget = codegen::Target::host();
  if (isCTarget(model.target)) {
    if (codegen::findCCompiler().empty())
      LOOM_THROW(LinkerNotFoundError) << "cannot export '" << path << "' for the c target: no C compiler 'cc' on PATH "
                                      << "(install one, e.g. `apt-get install gcc`; a .tar export needs none and "
                                      << "holds kernels.c)";
    r.cSource = selfContainedC(model);
    writeFile(tmp.file("kernels.c"), r.cSource);
    report(o, "compiling kernels.c with cc", 0, 2);
    codegen::compileCObject(tmp.file("kernels.c"), tmp.file("kernels.o"), {});
    writeFile(tmp.file("data.o"), codegen::dataObject(linkTarget, data));
    objects = {tmp.file("kernels.o"), tmp.file("data.o")};
  } else {
    std::vector<codegen::LLVMModule> mods = buildLLVMKernels(model, o, r);
    linkTarget = mods[0].target();
    codegen::embedData(mods[0], data);
    objects = writeObjects(mods, tmp, "model");
  }
  if (codegen::findLinker(linkTarget).empty()) {
    bool so = path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0;
    std::string obj = so ? path.substr(0, path.size() - 3) + ".o" : path + ".o";
    std::error_code ec;
    fs::copy_file(objects[0], obj, fs::copy_options::overwrite_existing, ec);
    if (ec) LOOM_THROW(Error) << "cannot write '" << obj << "': " << ec.message();
    if (linkTarget.isHost())
      LOOM_THROW(LinkerNotFoundError) << "cannot link '" << path << "': no C compiler 'cc' on PATH (install one, e.g. "
                                      << "`apt-get install gcc`). The object file was written to '" << obj
                                      << "': link it with `cc -shared -o " << path << " " << obj << " -lm`";
    LOOM_THROW(LinkerNotFoundError) << "cannot link '" << path << "' for " << linkTarget.triple
                                    << ": no ld.lld on PATH (install it: `apt-get install lld`). The object file "
                                    << "(kernels and embedded data) was written to '" << obj << "': link it with `ld.lld "
                                    << "-shared -o " << path << " " << obj << "`, or on the target machine with `cc -shared -o "
                                    << path << " " << obj << " -lm`";
  }
  report(o, "linking " + path, 1, 2);
  // Linked beside the destination, then renamed: a failed link (a full disk, a file size limit)
  // leaves no half-written library, and the error names the destination and that a library
  // already there is unchanged, as writeFileAtomically's do.
  std::string partial = path + ".partial";
  std::error_code existsEc;
  const char* kept = fs::exists(path, existsEc) ? " (the previous file is unchanged)" : " (no file was written)";
  auto removePartial = [&] {
    std::error_code ec;
    fs::remove(partial, ec);
  };
  try {
    codegen::linkSharedLibrary(objects, linkTarget, partial);
    runtime::stampLibraryChecksum(partial);
    fs::rename(partial, path);
  } catch (const LinkerNotFoundError&) {
    removePartial();
    throw;
  } catch (const CodeGenError& e) {
    removePartial();
    LOOM_THROW(CodeGenError) << "cannot write '" << path << "': " << e.what() << kept;
  } catch (const Error&) {
    removePartial();
    throw;
  } catch (const std::exception& e) {  // RuntimeFailure of the checksum stamp, filesystem_error of the rename
    removePartial();
    LOOM_THROW(Error) << "cannot write '" << path << "': " << e.what() << kept;
  }
  report(o, "linked " + path, 2, 2);
  return r;
}

ExportResult exportPackage(const CompiledModel& model, const std::string& path, const ExportOptions& o) {
  checkTarget(model);
  ExportResult r;
  std::vector<std::pair<std::string, std::string>> files;
  TempDir tmp;
  if (isCTarget(model.target)) {
    r.cSource = selfContainedC(model);
    files.emplace_back("kernels.c", r.cSource);
    writeFile(tmp.file("kernels.c"), r.cSource);
    if (codegen::findCCompiler().empty()) {
      r.notes.push_back("no C compiler 'cc' on PATH: the package holds kernels.c only. Build kernels.so with "
                        "`cc -O2 -fPIC -fwrapv -shared -o kernels.so kernels.c -lm` and add it to the package to run it");
    } else {
      report(o, "compiling kernels.c with cc", 0, 2);
      codegen::compileCObject(tmp.file("kernels.c"), tmp.file("kernels.o"), {});
      report(o, "linking kernels.so", 1, 2);
      codegen::linkSharedLibrary({tmp.file("kernels.o")}, codegen::Target::host(), tmp.file("kernels.so"));
      report(o, "linked kernels.so", 2, 2);
      files.emplace_back("kernels.so", readFile(tmp.file("kernels.so")));
    }
  } else {
    std::vector<codegen::LLVMModule> mods = buildLLVMKernels(model, o, r);
    const codegen::LLVMModule& mod = mods[0];
    std::vector<std::string> objects = writeObjects(mods, tmp, "kernels");
    if (mod.target().isHost() && codegen::findLinker(mod.target()).empty())
      LOOM_THROW(LinkerNotFoundError) << "cannot link the kernels of '" << path << "': no C compiler 'cc' on PATH "
                                      << "(install one, e.g. `apt-get install gcc`)";
    if (!mod.target().isHost() && codegen::findLinker(mod.target()).empty()) {
      files.emplace_back("kernels.o", readFile(tmp.file("kernels.o")));
      r.notes.push_back("no ld.lld on PATH to link the kernels for " + mod.target().triple +
                        " (install it: `apt-get install lld`). The package holds the object kernels.o instead of "
                        "kernels.so: link it with `ld.lld -shared -o kernels.so kernels.o` (or on the target machine "
                        "`cc -shared -o kernels.so kernels.o -lm`) and add kernels.so to the package, or compile again "
                        "where ld.lld is installed");
    } else {
      report(o, "linking kernels.so", 0, 1);
      codegen::linkSharedLibrary(objects, mod.target(), tmp.file("kernels.so"));
      files.emplace_back("kernels.so", readFile(tmp.file("kernels.so")));
    }
    report(o, "linked kernels.so", 1, 1);
  }
  files.emplace_back("graph.json", model.graphJson);
  files.emplace_back("params.bin", runtime::saveParams(model.params));
  files.emplace_back("metadata.json", metadataWith(model, files, "tar"));
  try {
    runtime::writeTar(path, files);
  } catch (const std::exception& e) {
    LOOM_THROW(Error) << e.what();
  }
  for (const auto& f : files) r.members.push_back(f.first);
  return r;
}

ExportResult exportModel(const CompiledModel& model, const std::string& path, const ExportOptions& o) {
  auto endsWith = [&](const char* ext) {
    std::string e = ext;
    return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (endsWith(".so")) return exportLibrary(model, path, o);
  if (endsWith(".tar")) return exportPackage(model, path, o);
  LOOM_THROW(ValueError) << "cannot tell the package format of '" << path
                         << "': name it NAME.so (one shared library) or NAME.tar (a package of files)";
}

}  // namespace loom::driver
