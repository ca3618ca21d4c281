// The trace: the instructions a schedule applied, printable as a script, storable as JSON,
// replayable.
#pragma once
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/schedule/Instruction.h"

namespace loom::tir {

class Schedule;

class Trace {
public:
  std::vector<Instruction> insts;

  /// The schedule script, one instruction per line: `b0 = sch.get_block("C")`,
  /// `l1, l2, l3 = sch.get_loops(b0)`, `l4, l5 = sch.split(l1, factors=[None, 32])`, ...
  std::string str() const;
  /// `{"insts": [{"kind": "split", "inputs": [{"rv": "l1"}, [null, 32]], "outputs": ["l4", "l5"]},
  /// ...]}`.
  nlohmann::json toJson() const;
  /// Parses toJson()'s form; throws ParseError / TypeError on malformed input.
  static Trace fromJson(const nlohmann::json& j);
  /// Replays every instruction on `sch` (a fresh schedule of the same workload). `decisions`
  /// overrides the decision of the sampling instructions at those indices. Throws the
  /// primitive's ScheduleError when an instruction does not apply.
  void apply(Schedule& sch, const std::map<size_t, Value>& decisions = {}) const;
  /// The trace without the read-only instructions (get_block, get_loops, ...) whose results
  /// nothing uses; sampling instructions stay (their decisions are the schedule's choices).
  Trace simplified() const;
  /// The indices of the sampling instructions (whose decisions a tuner may change).
  std::vector<size_t> samplingInstructions() const;
};

/// The printed form of one value in a script (RVs by the names in `names`, id -> name).
std::string valueToScript(const Value& v, const std::map<int, std::string>& names);

} // namespace loom::tir
