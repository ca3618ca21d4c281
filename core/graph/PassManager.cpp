// The graph pass list and the runner with an after-pass hook.
#include "core/graph/PassManager.h"

#include <algorithm>

#include "core/graph/Printer.h"
#include "core/graph/pass/ConvertLayout.h"
#include "core/graph/pass/DeadCodeElimination.h"
#include "core/graph/pass/EliminateCommonSubexpr.h"
#include "core/graph/pass/FoldConstant.h"
#include "core/graph/pass/FuseOps.h"
#include "core/graph/pass/InferType.h"
#include "core/graph/pass/PruneConvTaps.h"
#include "core/graph/pass/SimplifyInference.h"
#include "core/graph/pass/WinogradConv.h"
#include "core/graph/qnn/Qnn.h"
#include "core/support/Error.h"

namespace loom::graph {

const std::vector<GraphPass>& allGraphPasses() {
  static const std::vector<GraphPass> passes{
      {"infer-type", [](const Module& m) { return inferType(m); }},
      {"simplify-inference", [](const Module& m) { return simplifyInference(m); }},
      {"prune-conv-taps", [](const Module& m) { return pruneConvTaps(m); }},
      {"fold-constant", [](const Module& m) { return foldConstant(m); }},
      {"eliminate-common-subexpr", [](const Module& m) { return eliminateCommonSubexpr(m); }},
      {"dead-code-elimination", [](const Module& m) { return eliminateDeadCode(m); }},
      {"convert-layout", [](const Module& m) { return convertLayout(m); }},
      {"winograd-conv", [](const Module& m) { return winogradConv(m); }},
      {"fuse-ops", [](const Module& m) { return fuseOps(m); }},
      {"fake-quantization-to-integer", [](const Module& m) { return qnn::fakeQuantizationToInteger(m); }},
      {"qnn-canonicalize", [](const Module& m) { return qnn::canonicalizeQnn(m); }},
  };
  return passes;
}

const GraphPass& findGraphPass(const std::string& name) {
  std::string known;
  for (const GraphPass& p : allGraphPasses()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  LOOM_THROW(ValueError) << "unknown graph pass '" << name << "' (known: " << known << ")";
}

std::vector<std::string> optimizePipeline() {
  return {"infer-type",      "fake-quantization-to-integer", "qnn-canonicalize", "simplify-inference",
          "prune-conv-taps", "fold-constant", "eliminate-common-subexpr", "fold-constant", "dead-code-elimination",
          "infer-type"};
}

std::vector<std::string> fusePipeline(bool blockedLayout) {
  std::vector<std::string> p = optimizePipeline();
  if (blockedLayout) {
    p.push_back("convert-layout");
    p.push_back("fold-constant");
    p.push_back("winograd-conv");
    p.push_back("fold-constant");
  }
  p.push_back("fuse-ops");
  return p;
}

std::vector<std::string> withoutPasses(const std::vector<std::string>& pipeline, const std::vector<std::string>& disabled) {
  for (const std::string& d : disabled) findGraphPass(d);
  std::vector<std::string> kept;
  for (const std::string& p : pipeline)
    if (std::find(disabled.begin(), disabled.end(), p) == disabled.end()) kept.push_back(p);
  return kept;
}

Module runGraphPasses(const Module& m, const std::vector<std::string>& passes,
                      const AfterPass& after) {
  Module cur = inferType(m);
  for (const std::string& name : passes) {
    const GraphPass& p = findGraphPass(name);
    std::string before = after ? printModule(cur) : std::string();
    cur = inferType(p.run(cur));
    if (after) after(name, cur, printModule(cur) != before);
  }
  return cur;
}

} // namespace loom::graph
