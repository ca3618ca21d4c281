// parallel, vectorize, unroll, bind: their errors, legality checks, implementation and trace
// instructions.
#include "core/schedule/primitive/for_kind.h"

#include "core/schedule/Analysis.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

namespace {

const char* verb(ForKind k) {
  switch (k) {
  case ForKind::Parallel:
    return "parallelize";
  case ForKind::Vectorized:
    return "vectorize";
  case ForKind::ThreadBinding:
    return "bind";
  default:
    return "unroll";
  }
}

bool validThreadTag(const std::string& t) {
  for (const char* ok : {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
                         "threadIdx.z", "vthread", "vthread.x", "vthread.y", "vthread.z"})
    if (t == ok) return true;
  return false;
}

// --- Legality -------------------------------------------------------------------------------

/// Every block under `loop` whose binding uses the loop var must bind it affinely and only to
/// spatial iter vars (reduce iter vars too when binding to threadIdx: cross-thread reduction).
void checkParallelizable(const Schedule& sch, const ForNode* loop, ForKind kind,
                         const std::string& thread) {
  for (auto* r : realizesUnder(loop)) {
    const BlockNode* b = r->block.get();
    bool uses = false;
    for (auto& v : r->iterValues)
      uses |= usesVar(v, loop->loopVar);
    if (!uses) continue;
    bool crossThread = kind == ForKind::ThreadBinding && thread.rfind("threadIdx.", 0) == 0;
    const IterVar* bad =
        crossThread ? iterVarUsingVarOfOtherType(r, loop->loopVar.get(),
                                                 {IterType::DataPar, IterType::CommReduce})
                    : iterVarUsingVarOfOtherType(r, loop->loopVar.get(), {IterType::DataPar});
    if (bad)
      throw WrongBlockIterTypeError(
          std::string("cannot ") + verb(kind) + " loop '" + loop->loopVar->name +
              "': it binds the " + iterTypeName(bad->iterType) + " iter var '" + bad->var->name +
              "' of block '" + b->name + "'" +
              (bad->iterType == IterType::CommReduce && kind != ForKind::ThreadBinding
                   ? " (iterations of a reduction depend on each other)"
                   : ""),
          sch.func(), {loop, b});
    if (!isAffineBinding(sch, r))
      throw NotAffineBindingError(
          std::string("cannot ") + verb(kind) + " loop '" + loop->loopVar->name + "': block '" +
              b->name + "' does not bind its iter vars affinely to the loops above it",
          sch.func(), {loop, b});
  }
}

// --- Implementation -----------------------------------------------------------------------

void setKind(Schedule& sch, const LoopRV& rv, ForKind kind, const std::string& thread) {
  const ForNode* loop = sch.get(rv);
  // Step 1. Check legality.
  if (kind == ForKind::ThreadBinding && !validThreadTag(thread))
    throw WrongThreadTagError(
        "bind: '" + thread +
            "' is not a thread axis (blockIdx.x/y/z, threadIdx.x/y/z, vthread, vthread.x/y/z)",
        sch.func(), {loop});
  if (kind != ForKind::Unrolled) checkParallelizable(sch, loop, kind, thread);
  // Step 2. Rebuild the loop with its new kind; its RV follows (same loop var).
  auto* n = new ForNode(*loop);
  n->kind = kind;
  n->threadTag = kind == ForKind::ThreadBinding ? thread : std::string();
  sch.replace(loop, Stmt(n), {{loop, n}});
}

} // namespace

void parallel(Schedule& sch, const LoopRV& loop) {
  setKind(sch, loop, ForKind::Parallel, {});
  sch.record("parallel", {Value(loop)}, {});
}

void vectorize(Schedule& sch, const LoopRV& loop) {
  setKind(sch, loop, ForKind::Vectorized, {});
  sch.record("vectorize", {Value(loop)}, {});
}

void unroll(Schedule& sch, const LoopRV& loop) {
  setKind(sch, loop, ForKind::Unrolled, {});
  sch.record("unroll", {Value(loop)}, {});
}

void bind(Schedule& sch, const LoopRV& loop, const std::string& thread) {
  setKind(sch, loop, ForKind::ThreadBinding, thread);
  sch.record("bind", {Value(loop), Value(thread)}, {});
}

// --- Trace instructions -------------------------------------------------------------------

void registerForKindInstructions() {
  auto simple = [](const char* name, const char* doc, void (*fn)(Schedule&, const LoopRV&)) {
    registerInstructionKind({name,
                             {{"loop", vt::Loop}},
                             false,
                             false,
                             false,
                             doc,
                             [fn](Schedule& s, const std::vector<Value>& in, const Value&) {
                               fn(s, in[0].asLoop());
                               return std::vector<Value>{};
                             }});
  };
  simple("parallel", "Run a loop's iterations in parallel threads", &parallel);
  simple("vectorize", "Run a loop's iterations as SIMD lanes", &vectorize);
  simple("unroll", "Unroll a loop", &unroll);
  registerInstructionKind({"bind",
                           {{"loop", vt::Loop}, {"thread_axis", vt::String}},
                           false,
                           false,
                           false,
                           "Bind a loop to a GPU thread axis",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             tir::bind(s, in[0].asLoop(), in[1].asString()); // not std::bind (ADL)
                             return std::vector<Value>{};
                           }});
}

} // namespace loom::tir
