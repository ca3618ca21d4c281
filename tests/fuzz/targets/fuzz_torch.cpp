// Fuzz target: the TorchScript converter (core/frontend/torch) from a ts::Graph, the plain data the
// libtorch reader hands it. libtorch itself (the zip and pickle reader) is not fuzzed: it is not
// built with the sanitizers, and Loom does not own it. The bytes decode into a well-formed graph
// (TorchGraphBytes.h: node kinds from the converter's own table or unknown ones, inputs that refer
// to earlier values, constants with small tensors, scalar, list and tuple constants, prim::If and
// prim::Loop blocks, input shapes for forward()'s arguments), then convertTorchGraph (import and
// type inference) and the graph pipeline up to fusion. The converter must refuse bad graphs with
// its ImportError naming the node; any other exception escaping it is a finding (after import,
// the pipeline may refuse with any typed loom::Error but InternalError, as for ONNX).
#include "FuzzCommon.h"
#include "TorchGraphBytes.h"
#include "core/graph/PassManager.h"
#include "core/graph/Printer.h"

using namespace loom;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;
  static const std::vector<std::string> kinds = frontend::supportedTorchOps();
  frontend::ts::Graph g;
  frontend::TorchImportOptions options;
  fuzz::torchbytes::Decoder(data, size, kinds).decode(g, options);
  graph::Module m;
  try {
    m = frontend::convertTorchGraph(g, "fuzz.pt", options);
  } catch (const frontend::ImportError&) {
    return 0;
  }
  fuzz::refusesCleanly([&] {
    graph::Module fused = graph::runGraphPasses(m, graph::fusePipeline(size % 2 == 1));
    (void)graph::printModule(fused);
  });
  return 0;
}
