// Scalar and vector data types: a type code, a bit width and a lane count, like TVM's DLDataType.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace loom {

class DataType {
public:
  enum class Code : uint8_t { Int, UInt, Float, BFloat, Handle, Bool };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1) : m_code(code), m_bits(bits), m_lanes(lanes) {}

  static constexpr DataType Int(int bits, int lanes = 1) { return {Code::Int, bits, lanes}; }
  static constexpr DataType UInt(int bits, int lanes = 1) { return {Code::UInt, bits, lanes}; }
  static constexpr DataType Float(int bits, int lanes = 1) { return {Code::Float, bits, lanes}; }
  static constexpr DataType BFloat16(int lanes = 1) { return {Code::BFloat, 16, lanes}; }
  static constexpr DataType Bool(int lanes = 1) { return {Code::Bool, 1, lanes}; }
  static constexpr DataType Handle() { return {Code::Handle, 64, 1}; }
  /// The "void" type of statements-as-expressions (Evaluate of a call with no value).
  static constexpr DataType Void() { return {Code::Handle, 0, 1}; }

  constexpr Code code() const { return m_code; }
  constexpr int bits() const { return m_bits; }
  constexpr int lanes() const { return m_lanes; }
  constexpr int bytes() const { return (m_bits * m_lanes + 7) / 8; }

  constexpr bool isInt() const { return m_code == Code::Int; }
  constexpr bool isUInt() const { return m_code == Code::UInt; }
  /// Signed or unsigned integer (not bool).
  constexpr bool isIntegral() const { return isInt() || isUInt(); }
  constexpr bool isFloat() const { return m_code == Code::Float || m_code == Code::BFloat; }
  constexpr bool isBFloat16() const { return m_code == Code::BFloat; }
  constexpr bool isBool() const { return m_code == Code::Bool; }
  constexpr bool isHandle() const { return m_code == Code::Handle && m_bits != 0; }
  constexpr bool isVoid() const { return m_code == Code::Handle && m_bits == 0; }
  constexpr bool isScalar() const { return m_lanes == 1; }
  constexpr bool isVector() const { return m_lanes > 1; }

  constexpr DataType withLanes(int lanes) const { return {m_code, m_bits, lanes}; }
  constexpr DataType element() const { return withLanes(1); }

  constexpr bool operator==(const DataType&) const = default;

  /// TVM spelling: "float32", "int64", "float32x8", "bool", "handle".
  std::string str() const;
  /// Parses the TVM spelling; std::nullopt when the text is not a type.
  static std::optional<DataType> parse(const std::string& text);

private:
  Code m_code = Code::Handle;
  uint8_t m_bits = 0;
  uint16_t m_lanes = 1;
};

}  // namespace loom
