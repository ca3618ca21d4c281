// A "__datadep" node of the executor's graph JSON (GraphExecutor.h): the op, its attributes,
// the symbol it binds and that symbol's upper bound.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/DataDependentOps.h"
#include "runtime/ShapeExpr.h"

namespace loom::runtime {

struct DataDependentNode {
  std::string op, symbol;
  datadep::Attrs attrs;
  ShapeExpr bound;  ///< an upper bound of the symbol over the input symbols
  /// Where the actual count is read: (output index, dim) of the first output dim that is the
  /// symbol alone.
  size_t output = 0, axis = 0;
  std::vector<int> dependents;  ///< entries whose shapes use the symbol
};

/// Parses a node's "op", "attrs", "symbol" and "bound"; RuntimeFailure naming the node.
std::shared_ptr<DataDependentNode> parseDataDependentNode(const nlohmann::json& x, const std::string& nodeName);

}  // namespace loom::runtime
