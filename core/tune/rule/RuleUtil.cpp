// Schedule rule helpers.
#include "core/tune/rule/RuleUtil.h"

#include <set>

#include "core/tir/Visitor.h"

namespace loom::tune::rule {

using namespace tir;

std::vector<std::string> blockNames(const Schedule& sch) {
  std::vector<std::string> out;
  for (const BlockNode* b : allBlocks(sch.func()))
    if (b->name != "root") out.push_back(b->name);
  return out;
}

bool isPlainNest(const Schedule& sch, const BlockNode* block) {
  const BlockRealizeNode* realize = sch.realizeOf(block);
  auto loops = loopsAbove(sch, block);
  if (!realize || loops.size() != block->iterVars.size()) return false;
  for (size_t i = 0; i < loops.size(); ++i) {
    auto* v = realize->iterValues[i].as<VarNode>();
    if (v != loops[i]->loopVar.get()) return false;
    if (!constIntValue(loops[i]->extent)) return false;
  }
  return true;
}

bool isReduction(const BlockNode* block) {
  for (auto& iv : block->iterVars)
    if (iv.iterType != IterType::DataPar) return true;
  return false;
}

bool writesOutput(const Schedule& sch, const BlockNode* block) {
  for (auto& w : block->writes)
    for (auto& [var, buf] : sch.func()->bufferMap)
      if (buf.get() == w.buffer.get()) return true;
  return false;
}

namespace {
class ConditionalFinder : public IRVisitor {
public:
  bool found = false;
  using IRVisitor::visit;
  void visit(const SelectNode* n) override {
    found = true;
    IRVisitor::visit(n);
  }
  void visit(const CallNode* n) override {
    if (n->op == "if_then_else") found = true;
    IRVisitor::visit(n);
  }
};

class VarUse : public IRVisitor {
public:
  std::set<const VarNode*> used;
  using IRVisitor::visit;
  void visit(const VarNode* n) override { used.insert(n); }
};
} // namespace

bool hasConditional(const BlockNode* block) {
  ConditionalFinder f;
  f.visitStmt(block->body);
  return f.found;
}

bool hasDataReuse(const BlockNode* block) {
  for (auto& r : block->reads) {
    VarUse u;
    for (auto& rg : r.region) {
      u.visitExpr(rg.min);
      u.visitExpr(rg.extent);
    }
    for (auto& iv : block->iterVars)
      if (iv.iterType == IterType::DataPar && !u.used.count(iv.var.get())) return true;
  }
  return false;
}

} // namespace loom::tune::rule
