// Typed attributes of a graph op call: ints, floats, strings, int and float lists, dtypes.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/DataType.h"

namespace loom::graph {

/// The kinds an attribute value can take, in the order of AttrValue's alternatives.
enum class AttrKind : uint8_t { Int, Float, String, Ints, Floats, DType };

using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, DataType>;

inline AttrKind attrKind(const AttrValue& v) {
  return AttrKind(v.index());
}
const char* attrKindName(AttrKind k);
/// Relay spelling: 3, 1e-05f, "NCHW", [1, 1], [0.5f], "float32".
std::string attrValueStr(const AttrValue& v);

/// A call's attributes by name. Every attribute in the op's schema is present once the call has
/// been built through makeCall() (defaults filled in), so getters on a built call never miss.
class Attrs {
public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> init) : m_values(init) {}

  void set(const std::string& name, AttrValue v) { m_values[name] = std::move(v); }
  bool has(const std::string& name) const { return m_values.count(name) != 0; }
  const AttrValue* find(const std::string& name) const;

  /// Typed getters; throw InternalError when missing or of another kind (the schema guarantees
  /// both for built calls).
  int64_t getInt(const std::string& name) const;
  double getFloat(const std::string& name) const;
  const std::string& getString(const std::string& name) const;
  const std::vector<int64_t>& getInts(const std::string& name) const;
  const std::vector<double>& getFloats(const std::string& name) const;
  DataType getDType(const std::string& name) const;

  const std::map<std::string, AttrValue>& values() const { return m_values; }
  bool operator==(const Attrs& o) const { return m_values == o.m_values; }

private:
  std::map<std::string, AttrValue> m_values;
};

} // namespace loom::graph
