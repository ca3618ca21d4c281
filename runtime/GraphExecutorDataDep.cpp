// The graph executor's data-dependent nodes: ops whose output shape depends on the data run on
// the host (runtime/DataDependentOps), write their outputs compactly into storage sized for the
// symbol's bound, and bind the symbol for the kernels after them (docs/dynamic-shapes.md).
#include <algorithm>
#include <cstring>

#include "runtime/DataDependentNode.h"
#include "runtime/GraphExecutor.h"
#include "runtime/RuntimeFailure.h"

namespace loom::runtime {

std::shared_ptr<DataDependentNode> parseDataDependentNode(const nlohmann::json& x, const std::string& nodeName) {
  auto d = std::make_shared<DataDependentNode>();
  try {
    d->op = x.at("op").get<std::string>();
    d->symbol = x.at("symbol").get<std::string>();
    d->bound = ShapeExpr(x.at("bound").get<std::string>());
    if (x.contains("attrs")) {
      const auto& a = x.at("attrs");
      d->attrs.axis = a.value("axis", int64_t(0));
      d->attrs.hasAxis = a.value("has_axis", int64_t(0)) != 0;
      d->attrs.largest = a.value("largest", int64_t(1)) != 0;
      d->attrs.sorted = a.value("sorted", int64_t(1)) != 0;
      d->attrs.centerPointBox = a.value("center_point_box", int64_t(0));
      d->attrs.hasScoreThreshold = a.value("has_score_threshold", int64_t(0)) != 0;
    }
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeFailure("graph: data-dependent node '" + nodeName + "': " + e.what());
  } catch (const RuntimeFailure& e) {
    throw RuntimeFailure("graph: data-dependent node '" + nodeName + "': " + e.what());
  }
  if (!datadep::isKnownOp(d->op))
    throw RuntimeFailure("graph: data-dependent node '" + nodeName + "' has op '" + d->op +
                         "', which this runtime cannot run (it runs nonzero, topk, nms and unique)");
  return d;
}

void GraphExecutor::linkDataDependent(Node& n) {
  DataDependentNode& d = *n.dd;
  bool found = false;
  for (size_t k = 0; k < n.outputs.size() && !found; ++k) {
    const Entry& e = entry(n.outputs[k]);
    for (size_t a = 0; a < e.sym.size() && !found; ++a)
      if (e.sym[a].text() == d.symbol) {
        d.output = k;
        d.axis = a;
        found = true;
      }
  }
  if (!found)
    throw RuntimeFailure("graph: data-dependent node '" + n.name + "': no output dim is its symbol '" + d.symbol + "'");
  for (size_t e = 0; e < m_entries.size(); ++e)
    for (const ShapeExpr& x : m_entries[e].sym) {
      std::vector<std::string> s = x.symbols();
      if (std::find(s.begin(), s.end(), d.symbol) != s.end()) {
        d.dependents.push_back(int(e));
        break;
      }
    }
  ++m_dataSymbols;
}

void GraphExecutor::bindDataSymbolBounds() {
  // In node order: a bound may use an earlier node's symbol, which holds its own bound here.
  for (const Node& n : m_nodes)
    if (n.dd) {
      int64_t b = 0;
      try {
        b = n.dd->bound.eval(m_symbolValues);
      } catch (const RuntimeFailure& e) {
        throw RuntimeFailure("node '" + n.name + "': bound " + n.dd->bound.text() + " of '" + n.dd->symbol +
                             "': " + e.what());
      }
      m_symbolValues[n.dd->symbol] = std::max<int64_t>(b, 0);
    }
}

void GraphExecutor::growStorage(size_t s, size_t bytes) {
  Block bigger = Block::allocate(bytes, m_dev);
  std::memcpy(bigger.data(), m_storage[s].data(), m_storage[s].byteSize());
  m_storage[s] = bigger;
  ++m_storageGrowths;
  for (Entry& e : m_entries)
    if (size_t(e.storage) == s) e.view.data = bigger.data();
}

void GraphExecutor::runDataDependent(const Node& n) {
  const DataDependentNode& d = *n.dd;
  std::vector<NDArray> in;
  for (int id : n.inputs) {
    const Entry& e = entry(id);
    NDArray a = NDArray::empty(e.shape, e.dtype);
    if (e.bytes()) a.copyFromBytes(e.view.data, e.bytes());
    in.push_back(a);
  }
  std::vector<NDArray> out;
  try {
    out = datadep::run(d.op, d.attrs, in);
  } catch (const RuntimeFailure& e) {
    throw RuntimeFailure("node '" + n.name + "' (" + d.op + "): " + e.what());
  }
  if (out.size() != n.outputs.size())
    throw RuntimeFailure("node '" + n.name + "' (" + d.op + "): " + std::to_string(out.size()) + " results for " +
                         std::to_string(n.outputs.size()) + " outputs");
  // The symbol takes the actual count; the entries that use it are re-sized (storage was
  // planned at the bound, so it only grows where a shape is not monotone in the symbol).
  m_symbolValues[d.symbol] = out[d.output].shape().at(d.axis);
  for (int id : d.dependents) {
    Entry& e = m_entries[size_t(id)];
    for (size_t k = 0; k < e.sym.size(); ++k) e.shape[k] = e.sym[k].eval(m_symbolValues);
    if (e.bytes() > m_storage[size_t(e.storage)].byteSize()) growStorage(size_t(e.storage), e.bytes());
  }
  for (size_t k = 0; k < out.size(); ++k) {
    const Entry& e = entry(n.outputs[k]);
    if (out[k].shape() != e.shape || !(out[k].dtype() == e.dtype))
      throw RuntimeFailure("node '" + n.name + "' (" + d.op + "): result " + std::to_string(k) + " is " +
                           out[k].dtype().str() + " of another shape than its entry's " + e.dtype.str());
    if (e.bytes()) std::memcpy(e.view.data, out[k].data(), e.bytes());
  }
}

}  // namespace loom::runtime
