// Values that schedule instructions take and return: random variables (RVs), constants, lists,
// lambdas.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::tir {

/// Handles to blocks, loops and sampled integers of one Schedule. They stay valid across
/// transformations (the Schedule maps each id to the current node) until a primitive removes
/// their node; `id` indexes the Schedule's table.
struct BlockRV {
  int id = -1;
};
struct LoopRV {
  int id = -1;
};
struct ExprRV {
  int id = -1;
};

struct ScriptLambda;

/// One argument or result of an instruction. RVs are stored by id; a Value is cheap to copy.
class Value {
public:
  enum class Kind : uint8_t { None, Bool, Int, Float, String, Block, Loop, ExprRV, List, Lambda };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool v) : m_kind(Kind::Bool), m_int(v) {}
  Value(int v) : m_kind(Kind::Int), m_int(v) {}
  Value(int64_t v) : m_kind(Kind::Int), m_int(v) {}
  Value(double v) : m_kind(Kind::Float), m_float(v) {}
  Value(const char* v) : m_kind(Kind::String), m_str(v) {}
  Value(std::string v) : m_kind(Kind::String), m_str(std::move(v)) {}
  Value(BlockRV rv) : m_kind(Kind::Block), m_int(rv.id) {}
  Value(LoopRV rv) : m_kind(Kind::Loop), m_int(rv.id) {}
  Value(ExprRV rv) : m_kind(Kind::ExprRV), m_int(rv.id) {}
  Value(std::vector<Value> items)
      : m_kind(Kind::List), m_list(std::make_shared<std::vector<Value>>(std::move(items))) {}
  Value(std::shared_ptr<const ScriptLambda> f) : m_kind(Kind::Lambda), m_lambda(std::move(f)) {}
  template <class RV, class = decltype(RV::id)> static Value list(const std::vector<RV>& rvs) {
    std::vector<Value> v;
    for (auto& r : rvs)
      v.emplace_back(r);
    return Value(std::move(v));
  }

  Kind kind() const { return m_kind; }
  bool isNone() const { return m_kind == Kind::None; }
  bool isRV() const {
    return m_kind == Kind::Block || m_kind == Kind::Loop || m_kind == Kind::ExprRV;
  }

  bool asBool() const { return m_int != 0; }
  int64_t asInt() const { return m_int; }
  double asFloat() const { return m_kind == Kind::Int ? double(m_int) : m_float; }
  const std::string& asString() const { return m_str; }
  BlockRV asBlock() const { return {int(m_int)}; }
  LoopRV asLoop() const { return {int(m_int)}; }
  ExprRV asExprRV() const { return {int(m_int)}; }
  /// The RV id of a Block/Loop/ExprRV value.
  int rvId() const { return int(m_int); }
  const std::vector<Value>& asList() const;
  const std::shared_ptr<const ScriptLambda>& asLambda() const { return m_lambda; }

  /// A copy of an RV value with another id (same kind).
  Value withRVId(int id) const;

  /// The Python-ish type name used in error messages: "None", "int", "LoopRV", "list", ...
  static const char* kindName(Kind k);
  const char* typeName() const { return kindName(m_kind); }

  /// Structural equality (RVs compare by kind and id, lambdas by printed text).
  bool operator==(const Value& o) const;

private:
  Kind m_kind = Kind::None;
  int64_t m_int = 0;
  double m_float = 0;
  std::string m_str;
  std::shared_ptr<std::vector<Value>> m_list;
  std::shared_ptr<const ScriptLambda> m_lambda;
};

} // namespace loom::tir
