// `loom graph`: imports an ONNX model and prints its graph (as imported, optimized, fused, or dot).
#include <fstream>
#include <iostream>

#include "app/cli/Commands.h"
#include "core/driver/LoadModel.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Dot.h"
#include "core/graph/Op.h"
#include "core/graph/PassManager.h"
#include "core/graph/Printer.h"
#include "core/support/Error.h"

namespace loom::cli {

namespace {

enum class GraphEmit { Graph, Optimized, Fused, Dot };

struct GraphOptions {
  std::string model;
  std::string inputShapes;
  GraphEmit emit = GraphEmit::Graph;
  bool printAfterAll = false;
  bool blockedLayout = false;
  bool listOps = false;
  std::string output;
};

GraphOptions& options() {
  static GraphOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  GraphOptions& o = options();
  CLI::App* sub = app.add_subcommand("graph", "Import an ONNX or TorchScript model and print its graph");
  sub->footer("Examples:\n"
              "  loom graph examples/models/small_cnn/model.onnx --emit fused\n"
              "  loom graph model.onnx --input-shapes \"data:[1,3,224,224]\" --emit dot -o g.dot\n"
              "  loom graph model.onnx --emit optimized --print-after-all\n"
              "  loom graph resnet18.pt --input-shapes \"x:[1,3,224,224]\" --emit fused   # TorchScript\n"
              "  loom graph --list-ops");
  sub->add_option("model", o.model, "The model: ONNX (.onnx) or TorchScript (.pt, from torch.jit.save)");
  sub->add_flag("--list-ops", o.listOps,
                "List the graph ops (pattern, attributes with defaults) and the ONNX ops imported");
  sub->add_option("--input-shapes", o.inputShapes,
                  "Static input shapes, e.g. \"data:[1,3,224,224]\"");
  sub->add_option("--emit", o.emit,
                  "What to print: graph (as imported), optimized, fused, dot (of the fused graph)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, GraphEmit>{{"graph", GraphEmit::Graph},
                                           {"optimized", GraphEmit::Optimized},
                                           {"fused", GraphEmit::Fused},
                                           {"dot", GraphEmit::Dot}},
          CLI::ignore_case));
  sub->add_flag(
      "--convert-layout", o.blockedLayout,
      "Before fusing, move conv2d chains to the NCHW16c layout (for --emit fused and dot)");
  sub->add_flag("--print-after-all", o.printAfterAll,
                "Print the graph after every pass (to stderr)");
  sub->add_option("--output,-o", o.output, "Write to this file instead of stdout");
  return sub;
}

std::string opListing() {
  std::string out;
  for (const graph::OpDef* op : graph::allOps()) {
    out += op->name + "  [" + graph::opPatternName(op->pattern) + "]";
    for (const graph::AttrSpec& a : op->attrs)
      out += " " + a.name + "=" +
             (a.defaultValue ? graph::attrValueStr(*a.defaultValue)
                             : std::string("<") + graph::attrKindName(a.kind) + ">");
    out += "\n    " + op->doc + "\n";
  }
  out += "\nONNX ops (opsets " + std::to_string(frontend::kMinOpset) + "-" +
         std::to_string(frontend::kMaxOpset) + "):";
  size_t col = 0;
  for (const std::string& name : frontend::supportedOnnxOps()) {
    if (col + name.size() + 1 > 96) {
      out += "\n ";
      col = 0;
    }
    out += " " + name;
    col += name.size() + 1;
  }
  return out + "\n";
}

int run() {
  const GraphOptions& o = options();
  if (o.listOps) {
    std::cout << opListing();
    return 0;
  }
  if (o.model.empty()) LOOM_THROW(ValueError) << "graph: give a model file (or --list-ops)";
  graph::Module m = driver::loadModel(o.model, o.inputShapes).module;
  std::vector<std::string> passes;
  if (o.emit == GraphEmit::Optimized) passes = graph::optimizePipeline();
  if (o.emit == GraphEmit::Fused || o.emit == GraphEmit::Dot)
    passes = graph::fusePipeline(o.blockedLayout);
  graph::AfterPass after;
  if (o.printAfterAll)
    after = [](const std::string& pass, const graph::Module& mod, bool changed) {
      std::cerr << "// ---- after " << pass << (changed ? "" : " (unchanged)") << " ----\n";
      if (changed) std::cerr << graph::printModule(mod);
    };
  m = graph::runGraphPasses(m, passes, after);
  std::string text = o.emit == GraphEmit::Dot ? graph::toDot(m.main()) : graph::printModule(m);
  if (o.output.empty()) {
    std::cout << text;
    return 0;
  }
  std::ofstream out(o.output, std::ios::binary);
  if (!out) LOOM_THROW(Error) << o.output << ": cannot open for writing";
  out << text;
  if (!out.flush()) LOOM_THROW(Error) << o.output << ": write error";
  return 0;
}

const bool registered = addCommand({setup, run});

} // namespace

} // namespace loom::cli
