// Typed attributes: getters and the Relay-style spelling of values.
#include "core/graph/Attrs.h"

#include <cstdio>

#include "core/support/Error.h"

namespace loom::graph {

const char* attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Int:
    return "int";
  case AttrKind::Float:
    return "float";
  case AttrKind::String:
    return "string";
  case AttrKind::Ints:
    return "int list";
  case AttrKind::Floats:
    return "float list";
  case AttrKind::DType:
    return "dtype";
  }
  return "?";
}

namespace {
std::string floatStr(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return std::string(buf) + "f";
}
} // namespace

std::string attrValueStr(const AttrValue& v) {
  switch (attrKind(v)) {
  case AttrKind::Int:
    return std::to_string(std::get<int64_t>(v));
  case AttrKind::Float:
    return floatStr(std::get<double>(v));
  case AttrKind::String:
    return "\"" + std::get<std::string>(v) + "\"";
  case AttrKind::DType:
    return "\"" + std::get<DataType>(v).str() + "\"";
  case AttrKind::Ints: {
    std::string out = "[";
    const auto& l = std::get<std::vector<int64_t>>(v);
    for (size_t i = 0; i < l.size(); ++i)
      out += (i ? ", " : "") + std::to_string(l[i]);
    return out + "]";
  }
  case AttrKind::Floats: {
    std::string out = "[";
    const auto& l = std::get<std::vector<double>>(v);
    for (size_t i = 0; i < l.size(); ++i)
      out += (i ? ", " : "") + floatStr(l[i]);
    return out + "]";
  }
  }
  return "?";
}

const AttrValue* Attrs::find(const std::string& name) const {
  auto it = m_values.find(name);
  return it == m_values.end() ? nullptr : &it->second;
}

namespace {
template <class T> const T& getAs(const Attrs& a, const std::string& name) {
  const AttrValue* v = a.find(name);
  LOOM_ICHECK(v) << "attribute '" << name << "' missing";
  const T* p = std::get_if<T>(v);
  LOOM_ICHECK(p) << "attribute '" << name << "' has kind " << attrKindName(attrKind(*v));
  return *p;
}
} // namespace

int64_t Attrs::getInt(const std::string& name) const {
  return getAs<int64_t>(*this, name);
}
double Attrs::getFloat(const std::string& name) const {
  return getAs<double>(*this, name);
}
const std::string& Attrs::getString(const std::string& name) const {
  return getAs<std::string>(*this, name);
}
const std::vector<int64_t>& Attrs::getInts(const std::string& name) const {
  return getAs<std::vector<int64_t>>(*this, name);
}
const std::vector<double>& Attrs::getFloats(const std::string& name) const {
  return getAs<std::vector<double>>(*this, name);
}
DataType Attrs::getDType(const std::string& name) const {
  return getAs<DataType>(*this, name);
}

} // namespace loom::graph
