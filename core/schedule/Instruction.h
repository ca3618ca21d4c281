// Instructions (one applied primitive) and the registry of instruction kinds (name, params, apply).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/Value.h"
#include "core/support/Span.h"

namespace loom::tir {

class Schedule;

/// Bit masks of accepted Value kinds, for parameter checking.
namespace vt {
constexpr unsigned bit(Value::Kind k) {
  return 1u << unsigned(k);
}
constexpr unsigned None = bit(Value::Kind::None), Bool = bit(Value::Kind::Bool),
                   Int = bit(Value::Kind::Int),
                   Float = bit(Value::Kind::Float) | bit(Value::Kind::Int),
                   String = bit(Value::Kind::String), Block = bit(Value::Kind::Block),
                   Loop = bit(Value::Kind::Loop), ExprRV = bit(Value::Kind::ExprRV),
                   List = bit(Value::Kind::List), Lambda = bit(Value::Kind::Lambda);
/// "int or ExprRV", the usual type of a factor or a sampled integer.
constexpr unsigned IntOrRV = Int | ExprRV;
/// Human text for a mask: "LoopRV", "int or None", "list of (int or None)".
std::string describe(unsigned mask, unsigned elemMask = 0);
} // namespace vt

/// A parameter of an instruction kind, as the script and the trace printer see it.
struct ParamSpec {
  ParamSpec(std::string n, unsigned t, unsigned elem = 0, std::optional<Value> def = std::nullopt,
            bool kw = false, bool var = false)
      : name(std::move(n)), types(t), elemTypes(elem), defaultValue(std::move(def)), keyword(kw),
        variadic(var) {}
  std::string name;
  unsigned types = 0;                ///< vt:: mask of accepted kinds
  unsigned elemTypes = 0;            ///< for lists: accepted element kinds (0: any)
  std::optional<Value> defaultValue; ///< set: the parameter is optional
  bool keyword = false;              ///< printed as `name=value` (and omitted when default)
  /// Takes all remaining positional arguments as one list (`sch.reorder(i, j, k)`); printed spread.
  bool variadic = false;
};

/// What a primitive is to the trace and the script: its name, parameters and how to apply it.
/// `apply` gets the inputs in parameter order (defaults filled in, types checked) and the
/// decision (sampling kinds only), calls the C++ primitive (which records the instruction)
/// and returns the outputs as a flat list of RV values.
struct InstructionKind {
  std::string name;
  std::vector<ParamSpec> params;
  bool returnsList = false; ///< outputs print as `a, b = ...` and return to scripts as a list
  bool pure = false;        ///< reads the IR only (get_block, get_loops, sampling)
  bool sampling = false;    ///< has a decision (accepted and printed as `decision=...`)
  std::string doc;          ///< one line, shown in help and completion
  std::function<std::vector<Value>(Schedule&, const std::vector<Value>& inputs,
                                   const Value& decision)>
      apply;
};

/// Adds a kind (called from each family's register...Instructions()).
void registerInstructionKind(InstructionKind kind);
/// The kind named `name`, or nullptr.
const InstructionKind* findInstructionKind(const std::string& name);
/// Every registered kind name, sorted.
std::vector<std::string> instructionKindNames();
/// Registered names close to `name` (edit distance), best first, for "did you mean".
std::vector<std::string> closeInstructionKindNames(const std::string& name);

/// Checks `args` (positional) and `kwargs` against `kind`'s parameters and returns the inputs in
/// parameter order with defaults filled in; `decision` receives a sampling kind's `decision=`.
/// Throws TypeError naming the parameter (missing, unexpected, wrong type). `argIndex`, when
/// given, receives the index into args/kwargs (positional first) of the offending argument.
/// With `spread` false a variadic parameter takes one list argument (the stored form of traces).
std::vector<Value> bindArguments(const InstructionKind& kind, const std::vector<Value>& args,
                                 const std::vector<std::pair<std::string, Value>>& kwargs,
                                 Value& decision, int* argIndex = nullptr, bool spread = true);

/// One applied primitive. Inputs are in the kind's parameter order; outputs are the RVs it made.
struct Instruction {
  const InstructionKind* kind = nullptr;
  std::vector<Value> inputs;
  std::vector<Value> outputs;
  Value decision;
  Span span; ///< the script line it came from, when there is one (not serialized)
};

} // namespace loom::tir
