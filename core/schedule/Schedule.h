// tir::Schedule: a function being transformed, the RVs that name its blocks and loops, and the
// trace.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/schedule/Instruction.h"
#include "core/schedule/ScheduleError.h"
#include "core/schedule/Trace.h"
#include "core/schedule/Value.h"
#include "core/tir/Function.h"
#include "core/tir/Stmt.h"

namespace loom::tir {

/// Old node -> new node (nullptr: removed) for RVs that must follow a node a primitive rebuilt.
using ReplaceMap = std::unordered_map<const IRNode*, const IRNode*>;

/// A PrimFunc under transformation. Primitives (free functions in primitive/*.h, e.g.
/// `split(sch, loop, {nullptr, 32})`) read nodes through RVs, check legality, build new IR and
/// call `replace`, then `record` themselves in the trace. A Schedule is a value: copying it is
/// cheap (IR is shared) and gives an independent schedule (the tuner forks candidates this way).
class Schedule {
public:
  explicit Schedule(PrimFunc func, uint64_t seed = 1);
  /// Schedules function `funcName` of `mod` ("main", or the only function).
  static Schedule fromModule(const IRModule& mod, const std::string& funcName = "main",
                             uint64_t seed = 1);

  /// The function as transformed so far, and the module with it in place.
  const PrimFunc& func() const { return m_func; }
  IRModule mod() const;
  /// The function this schedule started from.
  const PrimFunc& original() const { return m_original; }
  const Trace& trace() const { return m_trace; }

  // --- Random variables -------------------------------------------------------------------
  BlockRV addRV(const BlockNode* block);
  LoopRV addRV(const ForNode* loop);
  ExprRV addExprRV(int64_t value);
  /// The node an RV names now. Throws InvalidRVError when the node was removed (naming the
  /// instruction and script line that removed it) or the RV is not from this schedule.
  const BlockNode* get(const BlockRV& rv) const;
  const ForNode* get(const LoopRV& rv) const;
  int64_t get(const ExprRV& rv) const;
  /// For an int or ExprRV value: its integer.
  int64_t getInt(const Value& v) const;
  bool isValid(const Value& rv) const;
  /// "loop 'i'", "block 'C'", "v3" (for messages).
  std::string describe(const Value& rv) const;

  // --- The tree ---------------------------------------------------------------------------
  /// The statement directly containing `n` (a For, SeqStmt, BlockRealize, Block, IfThenElse, ...),
  /// or nullptr for the function body. A Block's parent is its BlockRealize.
  const StmtNode* parentOf(const IRNode* n) const;
  const BlockRealizeNode* realizeOf(const BlockNode* block) const;
  /// True when `n` is part of the current function body.
  bool contains(const IRNode* n) const;

  /// Replaces statement `oldStmt` (part of the current body) by `newStmt` (undefined: delete it
  /// from its sequence), copying the path to the root. RVs of the rebuilt ancestors follow their
  /// copies; `follow` says where RVs of other rebuilt nodes go (nullptr: removed). RVs of nodes
  /// that vanish without a `follow` entry are matched again by loop var / block name, else
  /// reported removed by the instruction recorded next.
  void replace(const StmtNode* oldStmt, Stmt newStmt, const ReplaceMap& follow = {});
  /// Replaces the whole function (for primitives that rewrite buffers or params).
  void replaceFunc(PrimFunc func, const ReplaceMap& follow = {});

  // --- The trace --------------------------------------------------------------------------
  /// Appends an instruction (inputs in the kind's parameter order) and settles RVs: every RV
  /// whose node is gone is marked removed by this instruction. Call once, at the end of each
  /// primitive, also when it failed to change anything.
  void record(const std::string& kindName, std::vector<Value> inputs, std::vector<Value> outputs,
              Value decision = {});
  /// The location of the instruction being applied (set by the script runner), kept with the
  /// recorded instruction and used in "removed by split at line 3".
  void setSourceSpan(Span span) { m_span = std::move(span); }
  const Span& sourceSpan() const { return m_span; }
  /// While alive, primitives called by other primitives do not record themselves.
  class Silent {
  public:
    explicit Silent(Schedule& s) : m_s(s) { ++m_s.m_silent; }
    ~Silent() { --m_s.m_silent; }
    Silent(const Silent&) = delete;
    Silent& operator=(const Silent&) = delete;

  private:
    Schedule& m_s;
  };

  /// The random source of sampling primitives (seeded; copied with the schedule).
  std::mt19937_64& rng() { return m_rng; }

private:
  struct Entry {
    Value::Kind kind;
    Stmt node;             ///< ForNode / BlockNode; undefined once removed
    int64_t value = 0;     ///< ExprRV value
    std::string name;      ///< loop var / block name when last seen
    std::string removedBy; ///< "fuse at line 3", set once removed
  };
  struct Index {
    bool valid = false;
    std::unordered_map<const IRNode*, const StmtNode*> parent;
    std::unordered_map<const VarNode*, const ForNode*> loopByVar;
    std::unordered_map<std::string, std::vector<const BlockNode*>> blocksByName;
  };
  const Entry& entry(int id, Value::Kind kind) const;
  const Index& index() const;
  void applyFollow(const ReplaceMap& follow);
  void settle(const std::string& by);

  PrimFunc m_original, m_func;
  IRModule m_mod;
  std::string m_funcName;
  std::vector<Entry> m_rvs;
  Trace m_trace;
  Span m_span;
  int m_silent = 0;
  std::mt19937_64 m_rng;
  mutable Index m_index;
};

} // namespace loom::tir
