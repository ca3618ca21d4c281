// `loom compile`: imports an ONNX model and writes a deployable .tar package.
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommon.h"
#include "core/driver/CompileModel.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/support/Error.h"

namespace loom::cli {

namespace {

struct CompileOptions {
  std::string model, target = "llvm", inputShapes, output;
  int optLevel = 3;
};

CompileOptions& options() {
  static CompileOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  CompileOptions& o = options();
  CLI::App* sub = app.add_subcommand("compile", "Compile an ONNX model into a .tar package that `loom run` loads");
  sub->footer("Examples:\n"
              "  loom compile examples/models/small_cnn/model.onnx --input-shapes \"data:[1,3,16,16]\" "
              "-o small_cnn.tar\n"
              "  loom compile resnet18.onnx --target \"llvm -mcpu=x86-64-v2\" --opt-level 3 -o r18.tar");
  sub->add_option("model", o.model, "The .onnx model")->required();
  sub->add_option("--target", o.target, "Target (llvm, or an llvm target string)");
  sub->add_option("--input-shapes", o.inputShapes, "Static input shapes, e.g. \"data:[1,3,224,224]\"");
  sub->add_option("--output,-o", o.output, "The package to write (.tar)")->required();
  sub->add_option("--opt-level", o.optLevel, "0 (no fusion, no schedule) to 3")->check(CLI::Range(0, 3));
  return sub;
}

int run() {
  const CompileOptions& o = options();
  frontend::ImportOptions io;
  if (!o.inputShapes.empty()) io.inputShapes = frontend::parseInputShapes(o.inputShapes);
  graph::Module m = frontend::importOnnx(o.model, io);
  driver::CompileModelOptions co;
  co.optLevel = o.optLevel;
  co.outputNames = onnxOutputNames(o.model);
  driver::CompiledModel cm = driver::compileModel(m, o.target, {}, co);
  driver::writePackage(cm, o.output);
  std::cout << "wrote " << o.output << ": " << cm.kernels.size() << " kernels, " << cm.params.size() << " params\n";
  return 0;
}

const bool registered = addCommand({setup, run});

}  // namespace

}  // namespace loom::cli
