// Fuzz target: ONNX import (serialized ModelProto bytes -> importer with the checker -> InferType)
// and the graph pipeline up to fusion (fold-constant, layouts, Winograd, FuseOps).
#include "FuzzCommon.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/PassManager.h"
#include "core/graph/Printer.h"

using namespace loom;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return -1;
  std::string bytes = fuzz::bytesOf(data, size);
  fuzz::refusesCleanly([&] {
    graph::Module m = frontend::importOnnxBytes(bytes, "fuzz.onnx");
    graph::Module fused = graph::runGraphPasses(m, graph::fusePipeline(size % 2 == 1));
    (void)graph::printModule(fused);
  });
  return 0;
}
