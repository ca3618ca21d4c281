// The graph pass list: named passes (kebab-case, as the CLI and --print-after-all show them).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/graph/Expr.h"

namespace loom::graph {

struct GraphPass {
  std::string name; ///< "fold-constant"
  std::function<Module(const Module&)> run;
};

/// Every graph pass: infer-type, simplify-inference, fold-constant, eliminate-common-subexpr,
/// dead-code-elimination, convert-layout (NCHW16c), winograd-conv, fuse-ops, and the quantized
/// dialect's fake-quantization-to-integer and qnn-canonicalize (core/graph/qnn).
const std::vector<GraphPass>& allGraphPasses();
/// The pass called `name`; ValueError listing the known names when there is none.
const GraphPass& findGraphPass(const std::string& name);

/// The optimization pipeline, in order (the graph `--emit optimized` prints).
std::vector<std::string> optimizePipeline();
/// optimizePipeline(), with `blockedLayout` convert-layout, fold-constant, winograd-conv and
/// fold-constant (the Winograd kernels), then fuse-ops (what `--emit fused` prints).
std::vector<std::string> fusePipeline(bool blockedLayout = false);

/// `pipeline` without the passes named in `disabled` (ValueError, listing the known names, for
/// a name that is not a graph pass).
std::vector<std::string> withoutPasses(const std::vector<std::string>& pipeline, const std::vector<std::string>& disabled);

/// Called after each pass with its name, the result and whether the printed module changed.
using AfterPass = std::function<void(const std::string& pass, const Module& after, bool changed)>;
Module runGraphPasses(const Module& m, const std::vector<std::string>& passes,
                      const AfterPass& after = {});

} // namespace loom::graph
