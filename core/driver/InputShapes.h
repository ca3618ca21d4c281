// The --input-shapes grammar of every command that takes a model or runs one (compile, run,
// tune, profile, graph, onnx-test): one parser, one set of error messages.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/DataType.h"

namespace loom::driver {

/// One dim of an --input-shapes entry: a number (`48`), a named symbol (`W`, shared by every
/// input that names it), an anonymous symbol (`?`: the model's own symbol, or a fresh one), each
/// symbolic one with an optional upper bound (`W<=2048`, `?<=64`).
struct InputDim {
  int64_t value = -1;     ///< the extent when static, else -1
  std::string symbol;     ///< a named symbol; empty for a static or an anonymous dim
  int64_t bound = -1;     ///< the upper bound of a symbolic dim, -1 when none is given
  /// A representative value of a symbolic dim (`W=320`, `W<=2048=320`): `loom tune` tunes at it.
  int64_t example = -1;
  bool isStatic() const { return value >= 0; }
  bool isAnonymous() const { return value < 0 && symbol.empty(); }
  /// "48", "W", "?", "W<=2048".
  std::string str() const;
};

struct InputShape {
  std::string name;
  std::vector<InputDim> dims;
  std::optional<DataType> dtype;  ///< given as ":int64" after the shape
  bool isStatic() const;
  /// The dims as numbers; ValueError naming the input and dim when one is symbolic.
  std::vector<int64_t> staticDims(const std::string& why) const;
  std::string str() const;
};

/// A parsed --input-shapes text: the inputs in the order given, and the bound of every named
/// symbol that has one (a symbol bounded twice must get the same bound).
struct InputShapes {
  std::vector<InputShape> inputs;
  std::map<std::string, int64_t> bounds;
  std::string text;  ///< what was parsed
  bool empty() const { return inputs.empty(); }
  const InputShape* find(const std::string& name) const;
  /// True when every dim of every input is a number.
  bool isStatic() const;
};

/// Parses "x:[1,3,48,W<=2048],ids:[batch,seq]:int64,y:[1,?]" (grammar in docs/dynamic-shapes.md).
/// An input name is everything before ":[" (it may hold ':' or '/'); a symbol is
/// [A-Za-z_][A-Za-z0-9_]*; dtypes: float32, float64, float16, int64, int32, int8, uint8, bool.
/// ValueError on bad text, naming the column and showing it:
///   --input-shapes "x:[1,3,W<=]": expected a number after '<=' at column 10
///     x:[1,3,W<=]
///              ^
InputShapes parseInputShapes(const std::string& text);

/// The shapes of a command that needs numbers (loom run, profile): name -> dims. A symbolic dim
/// with a representative value (`W=320`) gives that value; any other symbolic dim is a
/// ValueError naming `command`, the input and the dim.
std::map<std::string, std::vector<int64_t>> concreteInputShapes(const std::string& text, const std::string& command);

}  // namespace loom::driver
