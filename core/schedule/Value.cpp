// Value helpers: list access, type names, equality.
#include "core/schedule/Value.h"

#include "core/schedule/Script.h"
#include "core/support/Error.h"

namespace loom::tir {

const std::vector<Value>& Value::asList() const {
  static const std::vector<Value> empty;
  return m_list ? *m_list : empty;
}

Value Value::withRVId(int id) const {
  Value v = *this;
  v.m_int = id;
  return v;
}

const char* Value::kindName(Kind k) {
  switch (k) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    return "bool";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::String:
    return "str";
  case Kind::Block:
    return "BlockRV";
  case Kind::Loop:
    return "LoopRV";
  case Kind::ExprRV:
    return "ExprRV";
  case Kind::List:
    return "list";
  case Kind::Lambda:
    return "lambda";
  }
  return "?";
}

bool Value::operator==(const Value& o) const {
  if (m_kind != o.m_kind) return false;
  switch (m_kind) {
  case Kind::None:
    return true;
  case Kind::Float:
    return m_float == o.m_float;
  case Kind::String:
    return m_str == o.m_str;
  case Kind::List:
    return asList() == o.asList();
  case Kind::Lambda:
    return m_lambda && o.m_lambda && m_lambda->str() == o.m_lambda->str();
  default:
    return m_int == o.m_int;
  }
}

} // namespace loom::tir
