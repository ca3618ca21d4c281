// get_block, get_loops, get_child_blocks, get_producers, get_consumers: lookups that return fresh
// RVs.
#include "core/schedule/primitive/get_block_loop.h"

#include "core/schedule/Analysis.h"

namespace loom::tir {

// --- Implementation -----------------------------------------------------------------------

BlockRV getBlock(Schedule& sch, const std::string& name, const std::string& funcName) {
  // Step 1. The function: "main" names the scheduled function whatever it is called.
  if (funcName != "main" && funcName != sch.func()->name)
    throw BlockNotFoundError("get_block: the schedule works on function '" + sch.func()->name +
                             "', not '" + funcName + "'");
  // Step 2. Find the blocks with this name.
  auto found = findBlocks(sch.func(), name);
  if (found.size() != 1) {
    std::string known;
    for (auto* b : allBlocks(sch.func()))
      if (b->name != "root") known += (known.empty() ? "" : ", ") + ("'" + b->name + "'");
    if (found.empty())
      throw BlockNotFoundError(
          "no block named '" + name + "' in function '" + sch.func()->name + "'" +
              (known.empty() ? std::string(" (it has no blocks)") : " (blocks: " + known + ")"),
          sch.func());
    std::vector<const IRNode*> marks(found.begin(), found.end());
    throw BlockNotFoundError(std::to_string(found.size()) + " blocks are named '" + name +
                                 "'; get_block needs a unique name",
                             sch.func(), marks);
  }
  // Step 3. Hand out an RV and record.
  BlockRV rv = sch.addRV(found[0]);
  sch.record("get_block", {Value(name), Value(funcName)}, {Value(rv)});
  return rv;
}

std::vector<LoopRV> getLoops(Schedule& sch, const BlockRV& block) {
  const BlockNode* b = sch.get(block);
  std::vector<LoopRV> out;
  for (auto* l : loopsAbove(sch, b))
    out.push_back(sch.addRV(l));
  sch.record("get_loops", {Value(block)}, Value::list(out).asList());
  return out;
}

namespace {
std::vector<BlockRV> childBlocksOf(Schedule& sch, const StmtNode* parent, const Value& input) {
  std::vector<BlockRV> out;
  for (auto* b : childBlocks(parent))
    out.push_back(sch.addRV(b));
  sch.record("get_child_blocks", {input}, Value::list(out).asList());
  return out;
}
} // namespace

std::vector<BlockRV> getChildBlocks(Schedule& sch, const BlockRV& parent) {
  return childBlocksOf(sch, sch.get(parent), Value(parent));
}
std::vector<BlockRV> getChildBlocks(Schedule& sch, const LoopRV& parent) {
  return childBlocksOf(sch, sch.get(parent), Value(parent));
}

std::vector<BlockRV> getProducers(Schedule& sch, const BlockRV& block) {
  std::vector<BlockRV> out;
  for (auto* b : producersOf(sch, sch.get(block)))
    out.push_back(sch.addRV(b));
  sch.record("get_producers", {Value(block)}, Value::list(out).asList());
  return out;
}

std::vector<BlockRV> getConsumers(Schedule& sch, const BlockRV& block) {
  std::vector<BlockRV> out;
  for (auto* b : consumersOf(sch, sch.get(block)))
    out.push_back(sch.addRV(b));
  sch.record("get_consumers", {Value(block)}, Value::list(out).asList());
  return out;
}

// --- Trace instructions -------------------------------------------------------------------

namespace {
template <class RV> std::vector<Value> values(const std::vector<RV>& rvs) {
  return Value::list(rvs).asList();
}
} // namespace

void registerGetBlockLoopInstructions() {
  registerInstructionKind(
      {"get_block",
       {{"name", vt::String}, {"func_name", vt::String, 0, Value("main"), true}},
       false,
       true,
       false,
       "The block with this name",
       [](Schedule& s, const std::vector<Value>& in, const Value&) {
         return std::vector<Value>{Value(getBlock(s, in[0].asString(), in[1].asString()))};
       }});
  registerInstructionKind({"get_loops",
                           {{"block", vt::Block}},
                           true,
                           true,
                           false,
                           "The loops above a block, outermost first",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             return values(getLoops(s, in[0].asBlock()));
                           }});
  registerInstructionKind({"get_child_blocks",
                           {{"block_or_loop", vt::Block | vt::Loop}},
                           true,
                           true,
                           false,
                           "The blocks directly under a block or loop",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             return in[0].kind() == Value::Kind::Block
                                        ? values(getChildBlocks(s, in[0].asBlock()))
                                        : values(getChildBlocks(s, in[0].asLoop()));
                           }});
  registerInstructionKind({"get_producers",
                           {{"block", vt::Block}},
                           true,
                           true,
                           false,
                           "The blocks that write what a block reads",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             return values(getProducers(s, in[0].asBlock()));
                           }});
  registerInstructionKind({"get_consumers",
                           {{"block", vt::Block}},
                           true,
                           true,
                           false,
                           "The blocks that read what a block writes",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             return values(getConsumers(s, in[0].asBlock()));
                           }});
}

} // namespace loom::tir
