// `loom compile`: imports an ONNX model and writes a deployable package (.so library or .tar).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommon.h"
#include "core/driver/CompileModel.h"
#include "core/driver/ExportLibrary.h"
#include "core/driver/LoadModel.h"
#include "core/driver/SymbolBounds.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Printer.h"
#include "core/support/Error.h"
#include "core/tir/Printer.h"
#include "core/tune/ModelTasks.h"

namespace loom::cli {

namespace {

struct CompileOptions {
  std::string model, target = "llvm", inputShapes, output, tuningRecords, desiredLayout, dumpCode;
  std::vector<std::string> disabledPasses;
  int optLevel = 3;
  bool quiet = false;
};

CompileOptions& options() {
  static CompileOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  CompileOptions& o = options();
  CLI::App* sub = app.add_subcommand("compile", "Compile an ONNX or TorchScript model into a package (.so or .tar) that `loom run` "
                                                "and the runtime load");
  sub->footer(
      "The output's extension picks the format: NAME.so is one shared library (kernels, graph, params\n"
      "and metadata embedded), NAME.tar a package of kernels.so, graph.json, params.bin and metadata.json.\n"
      "Progress goes to stderr. Exit code 0: written; 1: a problem with the model, the options or the\n"
      "environment (message says which); 2: an internal error of Loom.\n\n"
      "Examples:\n"
      "  loom compile examples/models/small_cnn/model.onnx --input-shapes \"data:[1,3,16,16]\" -o small_cnn.so\n"
      "  loom compile resnet18.onnx --target \"llvm -mcpu=x86-64-v2\" --opt-level 3 -o r18.tar\n"
      "  loom compile model.onnx --target \"llvm -mtriple=aarch64-linux-gnu\" -o model-arm.tar   # cross, not run\n"
      "  loom compile resnet18.pt --input-shapes \"x:[1,3,224,224]\" -o r18.so    # TorchScript (torch.jit.save)\n"
      "  loom compile model.onnx --target c -o model-c.tar        # kernels.c (+ kernels.so built with cc)\n"
      "  loom compile model.onnx --tuning-records r.json --dump-code relay,tir,ll,asm -o model.so");
  sub->add_option("model", o.model, "The model: ONNX (.onnx) or TorchScript (.pt, from torch.jit.save)")->required();
  sub->add_option("--target", o.target,
                  "llvm (this machine), an llvm target string (\"llvm -mcpu=X\", \"llvm -mtriple=aarch64-linux-gnu\"), "
                  "or c (C source)");
  sub->add_option("--input-shapes", o.inputShapes, "Input shapes (and dtypes), e.g. \"data:[1,3,224,224]\", \"ids:[1,64]:int64\", or symbolic: \"x:[1,3,48,W]\" (a named dim, shared by inputs that name it), \"x:[1,3,48,?]\" (anonymous), \"x:[1,3,48,W<=2048]\" (bounded: runs above it are refused, storage is planned for it); inputs not named keep the model's own (possibly symbolic) shapes; every input of a TorchScript model needs a static one");
  sub->add_option("--output,-o", o.output, "The package to write: NAME.so or NAME.tar")->required();
  sub->add_option("--opt-level", o.optLevel, "0 (no fusion, no schedule) to 3")->check(CLI::Range(0, 3));
  sub->add_option("--tuning-records", o.tuningRecords,
                  "A JSON-lines records file from `loom tune`: kernels with a record use its best schedule");
  sub->add_option("--desired-layout", o.desiredLayout,
                  "Conv layout: NCHW (as imported) or NCHWc (channel-blocked NCHW16c); default: the opt level's choice");
  sub->add_option("--disabled-pass", o.disabledPasses,
                  "Graph passes to leave out, comma-separated (e.g. winograd-conv: 3x3 convs stay direct)")
      ->delimiter(',');
  sub->add_option("--dump-code", o.dumpCode,
                  "Also write, next to the output, any of relay (imported graph, OUT.relay), tir (each kernel "
                  "scheduled and lowered, OUT.tir), ll (LLVM IR, OUT.ll), asm (OUT.s), c (C target, OUT.c); "
                  "comma-separated");
  sub->add_flag("--quiet,-q", o.quiet, "No progress output on stderr");
  return sub;
}

/// `path` without its extension (".so", ".tar"): the stem the dumped files are named after.
std::string stemOf(const std::string& path) {
  size_t slash = path.find_last_of('/'), dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path;
  return path.substr(0, dot);
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) LOOM_THROW(ValueError) << "cannot write '" << path << "': " << std::strerror(errno);
  f << text;
  // Closed here, not by the destructor: a text shorter than the stream's buffer reaches the
  // disk only now, and a full disk must fail the command, not leave an empty file behind.
  f.close();
  if (!f) LOOM_THROW(ValueError) << "cannot write '" << path << "': " << std::strerror(errno);
}

std::set<std::string> parseDumpKinds(const std::string& list, bool cTarget) {
  std::set<std::string> kinds;
  std::stringstream ss(list);
  std::string k;
  while (std::getline(ss, k, ',')) {
    k.erase(0, k.find_first_not_of(' '));
    k.erase(k.find_last_not_of(' ') + 1);
    if (k.empty()) continue;
    if (k != "relay" && k != "tir" && k != "ll" && k != "asm" && k != "c")
      LOOM_THROW(ValueError) << "--dump-code: unknown kind '" << k << "' (known: relay, tir, ll, asm, c)";
    if (cTarget && (k == "ll" || k == "asm"))
      LOOM_THROW(ValueError) << "--dump-code " << k << " needs an llvm target; the c target dumps c";
    if (!cTarget && k == "c") LOOM_THROW(ValueError) << "--dump-code c needs --target c";
    kinds.insert(k);
  }
  return kinds;
}

int run() {
  const CompileOptions& o = options();
  // Options first, so a mistake costs no compile time.
  std::string stem = stemOf(o.output), ext = o.output.substr(stem.size());
  if (stem.empty() || stem.back() == '/' || (ext != ".so" && ext != ".tar"))
    LOOM_THROW(ValueError) << "--output '" << o.output
                           << "': name it NAME.so (one shared library) or NAME.tar (a package of files)";
  if (o.desiredLayout == "NHWC")
    LOOM_THROW(ValueError) << "--desired-layout NHWC is not supported: Loom's conv kernels use NCHW or NCHWc "
                              "(channel-blocked NCHW16c); choose one of those";
  if (!o.desiredLayout.empty() && o.desiredLayout != "NCHW" && o.desiredLayout != "NCHWc")
    LOOM_THROW(ValueError) << "--desired-layout '" << o.desiredLayout << "' is not supported (supported: NCHW, NCHWc)";
  bool cTarget = driver::isCTarget(o.target);
  driver::canonicalTarget(o.target);  // throws TargetError for a bad string, before any work
  std::set<std::string> dumps = parseDumpKinds(o.dumpCode, cTarget);

  auto say = [&](const std::string& line) {
    if (!o.quiet) std::cerr << line << std::endl;
  };
  say("importing " + o.model);
  driver::LoadedModel loaded = driver::loadModel(o.model, o.inputShapes);
  graph::Module m = loaded.module;
  if (dumps.count("relay")) writeText(stem + ".relay", graph::printModule(m));

  driver::CompileModelOptions co;
  co.optLevel = o.optLevel;
  co.outputNames = loaded.format == "onnx" ? onnxOutputNames(o.model) : loaded.outputNames;
  co.desiredLayout = o.desiredLayout;
  co.disabledPasses = o.disabledPasses;
  int recordsUsed = 0;
  auto recordUse = std::make_shared<tune::RecordUse>();
  if (!o.tuningRecords.empty()) {
    // Records are looked up for the LLVM target they were measured on; the C target uses the host's.
    driver::ScheduleProvider fromRecords =
        tune::scheduleProviderFromRecords(o.tuningRecords, cTarget ? std::string("llvm") : o.target, recordUse);
    co.scheduleFor = [fromRecords, &recordsUsed](const driver::ModelGroup& g) {
      std::optional<driver::GroupSchedule> s = fromRecords(g);
      if (s) ++recordsUsed;
      return s;
    };
  }
  co.progress = [&](const std::string& what, int done, int total) {
    if (done < total) say("[" + std::to_string(done + 1) + "/" + std::to_string(total) + "] " + what);
  };
  driver::CompiledModel cm = driver::compileModel(m, o.target, {}, co);
  driver::applySymbolBounds(cm, loaded.symbolBounds);
  if (!o.tuningRecords.empty()) cm.tuningRecords.push_back(o.tuningRecords);
  if (dumps.count("tir")) {
    std::string text;
    for (size_t k = 0; k < cm.kernels.size(); ++k) {
      text += "# kernel " + cm.kernels[k]->name + " (schedule: " +
              (k < cm.scheduleSources.size() ? cm.scheduleSources[k] : std::string("?")) + ")\n";
      if (k < cm.scheduledKernels.size()) text += "# scheduled\n" + tir::printFunc(cm.scheduledKernels[k]) + "\n";
      text += "# lowered\n" + tir::printFunc(cm.kernels[k]) + "\n";
    }
    writeText(stem + ".tir", text);
  }

  driver::ExportOptions eo;
  eo.keepLLVMIR = dumps.count("ll") > 0;
  eo.keepAssembly = dumps.count("asm") > 0;
  eo.progress = [&](const std::string& what, int done, int total) {
    if (done < total) say("[codegen] " + what);
  };
  driver::ExportResult r = driver::exportModel(cm, o.output, eo);
  if (dumps.count("ll")) writeText(stem + ".ll", r.llvmIR);
  if (dumps.count("asm")) writeText(stem + ".s", r.assembly);
  if (dumps.count("c")) writeText(stem + ".c", r.cSource);
  for (const std::string& n : r.notes) std::cerr << "note: " << n << "\n";

  std::map<std::string, int> bySource;
  for (const std::string& s : cm.scheduleSources) ++bySource[s];
  std::string sources;
  for (const auto& [s, n] : bySource) sources += (sources.empty() ? "" : ", ") + std::to_string(n) + " " + s;
  std::cout << "wrote " << o.output << " (" << (ext == ".so" ? "shared library" : "tar package") << ", target "
            << o.target << "): " << cm.kernels.size() << " kernels" << (sources.empty() ? "" : " (schedules: " + sources + ")")
            << ", " << cm.params.size() << " params\n";
  if (!o.tuningRecords.empty())
    std::cout << "tuning records " << o.tuningRecords << ": " << recordsUsed << " of " << cm.kernels.size()
              << " kernels use a record (" << recordUse->summary()
              << "; a record is used only when it was measured faster than the default schedule)\n";
  for (const char* k : {"relay", "tir", "ll", "asm", "c"})
    if (dumps.count(k))
      std::cout << "dumped " << stem << "." << (std::string(k) == "asm" ? "s" : k) << "\n";
  return 0;
}

const bool registered = addCommand({setup, run});

}  // namespace

}  // namespace loom::cli
