// A TorchScript graph as plain C++ data: what the libtorch reader hands the converter.
//
// The reader (TorchReader.cpp, a shared library linked against libtorch and opened with dlopen
// only when a .pt file is imported) loads, freezes and inlines the module and copies its graph
// into these structs; the converter (TorchImporter.cpp) never sees a libtorch type. Only std types
// cross the library boundary, so both sides must be built by the same compiler (they are: one
// CMake build).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace loom::frontend::ts {

/// A tensor's data, contiguous, row-major. `dtype` is the ATen scalar type name ("Float",
/// "Long", "Int", "Double", "Bool", "Byte", "Char", "Short", "Half", "BFloat16").
struct TensorData {
  std::vector<int64_t> shape;
  std::string dtype;
  std::vector<uint8_t> bytes;
};

/// The value of a prim::Constant (or of a list of them).
struct ConstValue {
  enum class Kind { None, Int, Double, Bool, String, Ints, Doubles, Bools, Tensor, Device, Other };
  Kind kind = Kind::None;
  int64_t i = 0;
  double d = 0;
  std::string s; ///< String, Device ("cpu"); for Other, the IValue's type
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  TensorData tensor;
};

/// A value of the graph: its debug name (without TorchScript's ".N" suffix) and its type as
/// TorchScript prints it ("Tensor", "int", "int[]", "(Tensor, Tensor)").
struct Value {
  std::string name;
  std::string type;
};

struct Node;

/// A block: a list of nodes with inputs (a loop body's iteration index and carried values) and
/// outputs (what the block yields). Values are indices into Graph::values.
struct Block {
  std::vector<int> inputs;
  std::vector<Node> nodes;
  std::vector<int> outputs;
};

struct Node {
  std::string kind;           ///< "aten::_convolution", "prim::If", ...
  std::vector<int> inputs;    ///< value indices
  std::vector<int> outputs;
  std::vector<Block> blocks;  ///< prim::If: then, else; prim::Loop: body
  ConstValue constant;        ///< prim::Constant's value (None when it has none)
  std::string scope;          ///< the module instance path, "features.3.block.0" (may be empty)
  std::string file;           ///< the Python source of the node, when TorchScript kept it
  int line = 0;
  std::string sourceLine;     ///< the text of that line, trimmed
};

struct Graph {
  std::vector<Value> values;
  /// forward()'s arguments, without `self` (module-typed inputs are dropped).
  std::vector<int> inputs;
  Block body; ///< body.outputs: what forward returns (one value; a tuple is a TupleConstruct)
};

/// The reader's entry point, exported by the shared library with C linkage: fills `out` from the
/// archive at `path` and returns true, or sets `error` and returns false. Never throws.
using ReadFn = bool (*)(const char* path, Graph* out, std::string* error);
constexpr const char* kReadSymbol = "loom_torch_read_graph";

} // namespace loom::frontend::ts
