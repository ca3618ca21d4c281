// The --input-shapes parser: a small recursive-descent reader that names the column of a mistake.
#include "core/driver/InputShapes.h"

#include <cctype>
#include <set>

#include "core/support/Error.h"

namespace loom::driver {

std::string InputDim::str() const {
  std::string s = isStatic() ? std::to_string(value) : symbol.empty() ? "?" : symbol;
  if (bound >= 0) s += "<=" + std::to_string(bound);
  if (example >= 0) s += "=" + std::to_string(example);
  return s;
}

bool InputShape::isStatic() const {
  for (const InputDim& d : dims)
    if (!d.isStatic()) return false;
  return true;
}

std::vector<int64_t> InputShape::staticDims(const std::string& why) const {
  std::vector<int64_t> out;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].isStatic()) out.push_back(dims[k].value);
    else if (dims[k].example >= 0) out.push_back(dims[k].example);
    else
      LOOM_THROW(ValueError) << "--input-shapes gives '" << name << "' dimension " << k << " as " << dims[k].str() << "; "
                             << why << " needs a number there (or a representative value, " << dims[k].str() << "=N)";
  }
  return out;
}

std::string InputShape::str() const {
  std::string s = name + ":[";
  for (size_t k = 0; k < dims.size(); ++k) s += (k ? "," : "") + dims[k].str();
  s += "]";
  if (dtype) s += ":" + dtype->str();
  return s;
}

const InputShape* InputShapes::find(const std::string& name) const {
  for (const InputShape& s : inputs)
    if (s.name == name) return &s;
  return nullptr;
}

bool InputShapes::isStatic() const {
  for (const InputShape& s : inputs)
    if (!s.isStatic()) return false;
  return true;
}

namespace {

class Parser {
public:
  explicit Parser(const std::string& t) : m_t(t) {}

  InputShapes parse() {
    InputShapes out;
    out.text = m_t;
    std::map<std::string, int64_t> bounds;
    while (true) {
      skipSpace();
      if (m_i == m_t.size()) fail("expected NAME:[...]");
      InputShape s = item();
      if (out.find(s.name)) fail("input '" + s.name + "' is given twice", m_itemStart);
      for (const InputDim& d : s.dims) {
        if (d.symbol.empty() || d.bound < 0) continue;
        auto [it, fresh] = bounds.emplace(d.symbol, d.bound);
        if (!fresh && it->second != d.bound)
          fail("symbol '" + d.symbol + "' is bounded twice, by " + std::to_string(it->second) + " and " +
                   std::to_string(d.bound),
               m_itemStart);
      }
      out.inputs.push_back(std::move(s));
      skipSpace();
      if (m_i == m_t.size()) break;
      if (m_t[m_i] != ',') fail("expected ',' between inputs");
      ++m_i;
    }
    out.bounds = std::move(bounds);
    return out;
  }

private:
  [[noreturn]] void fail(const std::string& why, size_t at = std::string::npos) const {
    size_t col = at == std::string::npos ? m_i : at;
    LOOM_THROW(ValueError) << "--input-shapes \"" << m_t << "\": " << why << " at column " << col + 1
                           << " (expected NAME:[D,...] with D a number, a symbol, ? or SYMBOL<=BOUND; e.g. "
                              "\"x:[1,3,48,W<=2048]\")\n  "
                           << m_t << "\n  " << std::string(col, ' ') << "^";
  }
  void skipSpace() {
    while (m_i < m_t.size() && m_t[m_i] == ' ') ++m_i;
  }
  bool eat(const char* s) {
    skipSpace();
    std::string w(s);
    if (m_t.compare(m_i, w.size(), w) != 0) return false;
    m_i += w.size();
    return true;
  }
  int64_t number(const std::string& what) {
    skipSpace();
    size_t start = m_i;
    while (m_i < m_t.size() && std::isdigit(static_cast<unsigned char>(m_t[m_i]))) ++m_i;
    if (start == m_i) fail("expected " + what);
    if (m_i - start > 15) fail("the number is too large", start);
    return std::stoll(m_t.substr(start, m_i - start));
  }
  InputDim dim() {
    skipSpace();
    InputDim d;
    size_t start = m_i;
    if (m_i < m_t.size() && std::isdigit(static_cast<unsigned char>(m_t[m_i]))) {
      d.value = number("a dimension");
      return d;
    }
    if (m_i < m_t.size() && m_t[m_i] == '?') {
      ++m_i;
    } else if (m_i < m_t.size() && (std::isalpha(static_cast<unsigned char>(m_t[m_i])) || m_t[m_i] == '_')) {
      while (m_i < m_t.size() && (std::isalnum(static_cast<unsigned char>(m_t[m_i])) || m_t[m_i] == '_')) ++m_i;
      d.symbol = m_t.substr(start, m_i - start);
    } else if (m_i < m_t.size() && m_t[m_i] == '-') {
      fail("a dimension cannot be negative (use ? or a symbol for a dynamic one)");
    } else {
      fail("expected a dimension (a number, a symbol or ?)");
    }
    if (eat("<=")) {
      size_t at = m_i;
      d.bound = number("a number after '<='");
      if (d.bound < 1) fail("a bound must be at least 1", at);
    }
    if (eat("=")) {
      size_t at = m_i;
      d.example = number("a representative value after '='");
      if (d.example < 1) fail("a representative value must be at least 1", at);
      if (d.bound >= 0 && d.example > d.bound)
        fail("the representative value " + std::to_string(d.example) + " is above the bound " + std::to_string(d.bound), at);
    }
    return d;
  }
  InputShape item() {
    m_itemStart = m_i;
    InputShape s;
    size_t open = m_t.find(":[", m_i);
    size_t comma = m_t.find(',', m_i);
    if (open == std::string::npos || (comma != std::string::npos && comma < open))
      fail("expected NAME:[ (an input name, a colon and a bracket)");
    s.name = m_t.substr(m_i, open - m_i);
    while (!s.name.empty() && s.name.back() == ' ') s.name.pop_back();
    if (s.name.empty()) fail("missing the input name before ':['");
    m_i = open + 2;
    skipSpace();
    if (m_i < m_t.size() && m_t[m_i] == ']') {
      ++m_i;
    } else {
      while (true) {
        s.dims.push_back(dim());
        skipSpace();
        if (m_i < m_t.size() && m_t[m_i] == ',') {
          ++m_i;
          continue;
        }
        if (m_i < m_t.size() && m_t[m_i] == ']') {
          ++m_i;
          break;
        }
        fail(m_i == m_t.size() ? "missing ']'" : "expected ',' or ']' after a dimension");
      }
    }
    skipSpace();
    if (m_i < m_t.size() && m_t[m_i] == ':') {
      ++m_i;
      skipSpace();
      size_t start = m_i;
      while (m_i < m_t.size() && std::isalnum(static_cast<unsigned char>(m_t[m_i]))) ++m_i;
      std::string name = m_t.substr(start, m_i - start);
      static const std::set<std::string> known{"float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"};
      auto dt = known.count(name) ? DataType::parse(name) : std::nullopt;
      if (!dt)
        fail("unknown dtype '" + name + "' (float32, float64, float16, int64, int32, int8, uint8, bool)", start);
      s.dtype = *dt;
    }
    return s;
  }

  const std::string& m_t;
  size_t m_i = 0, m_itemStart = 0;
};

}  // namespace

InputShapes parseInputShapes(const std::string& text) { return Parser(text).parse(); }

std::map<std::string, std::vector<int64_t>> concreteInputShapes(const std::string& text, const std::string& command) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const InputShape& s : parseInputShapes(text).inputs) out[s.name] = s.staticDims(command);
  return out;
}

}  // namespace loom::driver
