// The graph executor: runs a compiled model's kernels in order over planned storage.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loom/c_runtime_api.h"
#include "runtime/Module.h"
#include "runtime/NDArray.h"
#include "runtime/ShapeExpr.h"

namespace loom::runtime {

/// Runs the graph JSON the model compiler writes:
///   {"storage": [{"bytes": B}, ...],
///    "entries": [{"storage": S, "shape": [...], "dtype": "float32"}, ...],
///    "inputs":  [{"name": "data", "entry": E}, ...],
///    "params":  [{"name": "p0", "entry": E}, ...],
///    "nodes":   [{"name": "fused_conv2d", "func": "fused_conv2d", "inputs": [E...], "outputs": [E...]}, ...],
///    "outputs": [{"name": "prob", "entry": E}, ...]}
/// Each storage is one allocation; entries (tensors) whose lifetimes do not overlap share one
/// (the plan is made at compile time). An entry may have "offset": B, a byte offset into its
/// storage (CPU, static shapes): the slice of a concatenation that its producer writes in place. A node with func "__copy" copies its input entry to its
/// output entry; every other func is a packed function of `kernels` called with the input and
/// output tensors. Failures throw RuntimeFailure naming the node. On a device other than the
/// CPU (`dev`), storage is device memory (a tensor's data is the device's handle, e.g. an
/// OpenCL cl_mem): inputs, params and outputs are copied through the device's DeviceAPI, and
/// the kernels must take such tensors.
///
/// A dynamic model (docs/dynamic-shapes.md) also has "symbols": [{"name": "N", "input": I,
/// "axis": A}, ...] (where each symbol's value is read) and, on entries with symbolic dims,
/// "sym_shape": [...] whose items are integers or shape expressions ("N", "(H + 1)//2"). Setting
/// an input binds the symbols it carries; run() evaluates every entry's shape and grows the
/// storages that need more room (a storage's "bytes" is then only its first size). A symbol may
/// have a "bound" (--input-shapes "x:[1,3,48,W<=2048]"): an input above it is refused, and the
/// storages are planned for the bounds ("storage_planned_for_bounds"), so no run grows them.
/// "shape_checks": [{"lhs": "W", "rhs": "V", "what": "node 'Concat_0' (concatenate) ..."}]
/// are equalities the compiler could not prove (dims of a concatenation or a broadcast); run()
/// refuses inputs that break one, naming the node, the dims and their values.
///
/// A node with func "__datadep" runs an op whose output shape depends on the data
/// (runtime/DataDependentOps.h): {"op": "nonzero", "attrs": {...}, "symbol": "nonzero_0",
/// "bound": "N*16"}. Storage is sized with the symbol at its bound; once the node has run, the
/// symbol takes the actual count and later kernels take it like an input's symbol
/// (GraphExecutorDataDep.cpp, docs/dynamic-shapes.md).
class GraphExecutor {
public:
  GraphExecutor(const std::string& graphJson, Module kernels, Device dev = {});

  size_t numInputs() const { return m_inputs.size(); }
  size_t numOutputs() const { return m_outputs.size(); }
  const std::string& inputName(size_t i) const { return m_inputs.at(i).name; }
  const std::string& outputName(size_t i) const { return m_outputs.at(i).name; }
  /// Shape and dtype of input / output `i`.
  std::vector<int64_t> inputShape(size_t i) const;
  DType inputDType(size_t i) const;
  std::vector<int64_t> outputShape(size_t i) const;
  DType outputDType(size_t i) const;
  /// Index of the input / output called `name`; RuntimeFailure listing the names when none is.
  size_t inputIndex(const std::string& name) const;
  size_t outputIndex(const std::string& name) const;

  /// True when some dims are symbolic (inputs of any shape that fits the symbols).
  bool isDynamic() const { return !m_symbols.empty() || m_dataSymbols > 0; }
  /// Input / output `i`'s dims as text: numbers, or the expressions of symbolic dims.
  std::vector<std::string> inputDims(size_t i) const;
  std::vector<std::string> outputDims(size_t i) const;

  /// Copies `value` into input `i` (dtype must match; the shape too, except that symbolic dims
  /// take the value's extents).
  void setInput(size_t i, const NDArray& value);
  void setInput(const std::string& name, const NDArray& value) { setInput(inputIndex(name), value); }
  /// Binds the parameters (once); every param of the graph must be present.
  void setParams(const std::map<std::string, NDArray>& params);
  /// Runs every node in order.
  void run();
  /// What runProfiled times a node with.
  enum class ProfileClock {
    Wall,        ///< elapsed time (steady clock)
    ProcessCpu,  ///< CPU time of the whole process: with one thread, steady on a busy machine
  };
  /// Runs once, timing each node; returns (node name, milliseconds) in execution order.
  std::vector<std::pair<std::string, double>> runProfiled(ProfileClock clock = ProfileClock::Wall);
  /// A copy of output `i` after run().
  NDArray getOutput(size_t i) const;
  NDArray getOutput(const std::string& name) const { return getOutput(outputIndex(name)); }

  size_t numNodes() const { return m_nodes.size(); }
  size_t numEntries() const { return m_entries.size(); }
  size_t numStorages() const { return m_storage.size(); }
  /// Bytes of all storage allocations together.
  size_t storageBytes() const;
  /// How many times a storage was re-allocated for a larger shape since construction.
  size_t storageGrowths() const { return m_storageGrowths; }
  /// The upper bound of each bounded symbol.
  std::map<std::string, int64_t> symbolBounds() const;

private:
  struct Entry {
    int storage = 0;
    std::vector<int64_t> shape;  ///< evaluated (0 for a symbolic dim not bound yet)
    std::vector<ShapeExpr> sym;  ///< per dim when some is symbolic, else empty
    DType dtype;
    LoomTensor view{};
    size_t bytes() const;
  };
  struct Named {
    std::string name;
    int entry = 0;
  };
  struct Node {
    std::string name, func;
    std::vector<int> inputs, outputs;
    std::vector<std::string> symbols;  ///< passed after the tensors, as int64 scalars
    PackedFunc fn;
    std::shared_ptr<struct DataDependentNode> dd;  ///< set for "__datadep" nodes
  };
  struct Symbol {
    std::string name;
    int input = 0, axis = 0;
    int64_t bound = -1;  ///< -1: none
  };
  struct ShapeCheck {
    ShapeExpr lhs, rhs;
    std::string what;
  };
  /// "W = 7 (dimension 3 of input 'x')" for each input symbol `e` uses.
  std::string symbolOrigins(const ShapeExpr& e) const;
  /// Checks input `i`'s dims against the symbols (all bound); RuntimeFailure naming the dim.
  void checkInputDims(size_t i) const;
  void runNode(Node& n);
  /// Data-dependent nodes (GraphExecutorDataDep.cpp): link one to the entries its symbol
  /// sizes, give the symbols their bounds (for sizing storage), run one and bind its symbol.
  void linkDataDependent(Node& n);
  void bindDataSymbolBounds();
  void runDataDependent(const Node& n);
  /// Grows storage `s` to `bytes`, keeping its contents, and re-points the entries on it.
  void growStorage(size_t s, size_t bytes);
  /// Evaluates the symbolic entries' shapes and grows storages (dynamic models).
  void bindShapes();
  std::vector<std::string> dims(const Entry& e) const;
  /// Copies a host (or any) array into entry `e`'s storage.
  void copyIn(const NDArray& value, const Entry& e);
  const Entry& entry(int e) const { return m_entries.at(size_t(e)); }

  Module m_kernels;
  Device m_dev;
  /// One storage allocation: device memory (an NDArray), or on the CPU, from 64 KiB on, pages
  /// mapped zero on first touch, so that a plan sized for the bounds (or the first guess) costs
  /// resident memory only for what the runs use (GraphExecutorStorage.cpp).
  class Block {
  public:
    static Block allocate(size_t bytes, Device dev);
    void* data() const { return m_data; }
    size_t byteSize() const { return m_bytes; }

  private:
    NDArray m_array;
    std::shared_ptr<void> m_pages;
    void* m_data = nullptr;
    size_t m_bytes = 0;
  };
  std::vector<Block> m_storage;
  std::vector<Entry> m_entries;
  std::vector<Named> m_inputs, m_params, m_outputs;
  std::vector<Node> m_nodes;
  std::vector<Symbol> m_symbols;
  std::vector<ShapeCheck> m_checks;
  size_t m_storageGrowths = 0;
  std::map<std::string, int64_t> m_symbolValues;
  std::vector<std::vector<int64_t>> m_inputShapesSet;  ///< the shape each input was set with
  bool m_shapesDirty = true;
  int m_dataSymbols = 0;  ///< how many "__datadep" nodes the graph has
};

}  // namespace loom::runtime
