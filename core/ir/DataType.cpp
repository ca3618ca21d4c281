// Spelling and parsing of data types.
#include "core/ir/DataType.h"

#include <cctype>

namespace loom {

std::string DataType::str() const {
  std::string s;
  switch (m_code) {
  case Code::Int: s = "int" + std::to_string(m_bits); break;
  case Code::UInt: s = "uint" + std::to_string(m_bits); break;
  case Code::Float: s = "float" + std::to_string(m_bits); break;
  case Code::BFloat: s = "bfloat" + std::to_string(m_bits); break;
  case Code::Bool: s = "bool"; break;
  case Code::Handle: return m_bits == 0 ? "void" : "handle";
  }
  if (m_lanes > 1) s += "x" + std::to_string(m_lanes);
  return s;
}

std::optional<DataType> DataType::parse(const std::string& text) {
  if (text == "handle") return Handle();
  if (text == "void") return Void();
  std::string base = text;
  int lanes = 1;
  // A lane suffix "x8" follows the bit width digits (or "bool").
  auto x = text.rfind('x');
  if (x != std::string::npos && x > 0 && x + 1 < text.size()) {
    bool afterDigits = std::isdigit(static_cast<unsigned char>(text[x - 1]));
    bool afterBool = text.compare(0, x, "bool") == 0;
    if (afterDigits || afterBool) {
      std::string l = text.substr(x + 1);
      if (l.size() > 5) return std::nullopt;
      for (char c : l)
        if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      lanes = std::stoi(l);
      base = text.substr(0, x);
    }
  }
  if (lanes < 1 || lanes > 65535) return std::nullopt;
  if (base == "bool") return Bool(lanes);
  auto num = [&](size_t prefix) -> int {
    std::string d = base.substr(prefix);
    if (d.empty() || d.size() > 3) return -1;
    for (char c : d)
      if (!std::isdigit((unsigned char)c)) return -1;
    return std::stoi(d);
  };
  int bits;
  if (base.rfind("uint", 0) == 0 && (bits = num(4)) > 0) {
    if (bits == 8 || bits == 16 || bits == 32 || bits == 64) return UInt(bits, lanes);
  } else if (base.rfind("int", 0) == 0 && (bits = num(3)) > 0) {
    if (bits == 8 || bits == 16 || bits == 32 || bits == 64) return Int(bits, lanes);
  } else if (base.rfind("bfloat", 0) == 0 && (bits = num(6)) > 0) {
    if (bits == 16) return BFloat16(lanes);
  } else if (base.rfind("float", 0) == 0 && (bits = num(5)) > 0) {
    if (bits == 16 || bits == 32 || bits == 64) return Float(bits, lanes);
  }
  return std::nullopt;
}

}  // namespace loom
