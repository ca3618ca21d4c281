// The schedule state: RV table, the parent index of the current body, path-copying replacement,
// recording.
#include "core/schedule/Schedule.h"

#include "core/schedule/Analysis.h"
#include "core/tir/Op.h"

namespace loom::tir {

Schedule::Schedule(PrimFunc func, uint64_t seed) : m_original(func), m_func(func), m_rng(seed) {
  LOOM_ICHECK(func.defined()) << "Schedule of an undefined function";
  m_funcName = func->name;
  m_mod.add(func);
}

Schedule Schedule::fromModule(const IRModule& mod, const std::string& funcName, uint64_t seed) {
  PrimFunc f = mod.lookup(funcName);
  if (!f && mod.functions.size() == 1) f = mod.functions.begin()->second;
  if (!f) LOOM_THROW(ValueError) << "the module has no function '" << funcName << "' to schedule";
  Schedule s(f, seed);
  s.m_mod = mod;
  s.m_funcName = f->name;
  return s;
}

IRModule Schedule::mod() const {
  IRModule m = m_mod;
  m.functions[m_funcName] = m_func;
  return m;
}

// --- RVs ----------------------------------------------------------------------------------

BlockRV Schedule::addRV(const BlockNode* block) {
  LOOM_ICHECK(block) << "RV of a null block";
  m_rvs.push_back({Value::Kind::Block, Stmt(block), 0, block->name, {}});
  return {int(m_rvs.size()) - 1};
}

LoopRV Schedule::addRV(const ForNode* loop) {
  LOOM_ICHECK(loop) << "RV of a null loop";
  m_rvs.push_back({Value::Kind::Loop, Stmt(loop), 0, loop->loopVar->name, {}});
  return {int(m_rvs.size()) - 1};
}

ExprRV Schedule::addExprRV(int64_t value) {
  m_rvs.push_back({Value::Kind::ExprRV, Stmt(), value, {}, {}});
  return {int(m_rvs.size()) - 1};
}

const Schedule::Entry& Schedule::entry(int id, Value::Kind kind) const {
  if (id < 0 || size_t(id) >= m_rvs.size() || m_rvs[id].kind != kind)
    throw InvalidRVError(std::string(Value::kindName(kind)) + " #" + std::to_string(id) +
                         " does not belong to this schedule");
  const Entry& e = m_rvs[id];
  if (kind != Value::Kind::ExprRV && !e.node) {
    std::string what = kind == Value::Kind::Loop ? "loop '" : "block '";
    throw InvalidRVError(what + e.name + "' was removed by " + e.removedBy, m_func);
  }
  return e;
}

const BlockNode* Schedule::get(const BlockRV& rv) const {
  return static_cast<const BlockNode*>(entry(rv.id, Value::Kind::Block).node.get());
}
const ForNode* Schedule::get(const LoopRV& rv) const {
  return static_cast<const ForNode*>(entry(rv.id, Value::Kind::Loop).node.get());
}
int64_t Schedule::get(const ExprRV& rv) const {
  return entry(rv.id, Value::Kind::ExprRV).value;
}

int64_t Schedule::getInt(const Value& v) const {
  if (v.kind() == Value::Kind::ExprRV) return get(v.asExprRV());
  LOOM_ICHECK(v.kind() == Value::Kind::Int) << "getInt of a " << v.typeName();
  return v.asInt();
}

bool Schedule::isValid(const Value& rv) const {
  if (!rv.isRV()) return false;
  int id = rv.rvId();
  if (id < 0 || size_t(id) >= m_rvs.size() || m_rvs[id].kind != rv.kind()) return false;
  return rv.kind() == Value::Kind::ExprRV || m_rvs[id].node.defined();
}

std::string Schedule::describe(const Value& rv) const {
  if (!rv.isRV() || rv.rvId() < 0 || size_t(rv.rvId()) >= m_rvs.size()) return rv.typeName();
  const Entry& e = m_rvs[rv.rvId()];
  switch (e.kind) {
  case Value::Kind::Loop:
    return "loop '" + e.name + "'";
  case Value::Kind::Block:
    return "block '" + e.name + "'";
  default:
    return "v" + std::to_string(rv.rvId()) + " (= " + std::to_string(e.value) + ")";
  }
}

// --- The tree -----------------------------------------------------------------------------

const Schedule::Index& Schedule::index() const {
  if (m_index.valid) return m_index;
  m_index = Index();
  m_index.valid = true;
  std::vector<std::pair<const StmtNode*, const StmtNode*>> stack; // (node, parent)
  if (m_func->body.defined()) stack.push_back({m_func->body.get(), nullptr});
  while (!stack.empty()) {
    auto [n, p] = stack.back();
    stack.pop_back();
    m_index.parent[n] = p;
    if (n->nodeKind == NodeKind::For) {
      auto* f = static_cast<const ForNode*>(n);
      m_index.loopByVar[f->loopVar.get()] = f;
    }
    if (n->nodeKind == NodeKind::Block) {
      auto* b = static_cast<const BlockNode*>(n);
      m_index.blocksByName[b->name].push_back(b);
    }
    auto kids = childStmts(n);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      stack.push_back({it->get(), n});
  }
  return m_index;
}

const StmtNode* Schedule::parentOf(const IRNode* n) const {
  auto& idx = index();
  auto it = idx.parent.find(n);
  return it == idx.parent.end() ? nullptr : it->second;
}

const BlockRealizeNode* Schedule::realizeOf(const BlockNode* block) const {
  const StmtNode* p = parentOf(block);
  return p && p->nodeKind == NodeKind::BlockRealize ? static_cast<const BlockRealizeNode*>(p)
                                                    : nullptr;
}

bool Schedule::contains(const IRNode* n) const {
  return index().parent.count(n) != 0;
}

// --- Replacement --------------------------------------------------------------------------

void Schedule::replace(const StmtNode* oldStmt, Stmt newStmt, const ReplaceMap& follow) {
  LOOM_ICHECK(contains(oldStmt)) << "replace: the statement is not part of the current function";
  ReplaceMap map = follow;
  const IRNode* cur = oldStmt;
  Stmt curNew = std::move(newStmt);
  while (const StmtNode* p = parentOf(cur)) {
    Stmt pNew = withChildReplaced(p, cur, curNew);
    if (!map.count(p)) map[p] = pNew.get();
    cur = p;
    curNew = pNew;
  }
  if (!curNew.defined()) curNew = evaluate(0);
  m_func = withBody(m_func, curNew);
  m_index.valid = false;
  applyFollow(map);
}

void Schedule::replaceFunc(PrimFunc func, const ReplaceMap& follow) {
  m_func = std::move(func);
  m_index.valid = false;
  applyFollow(follow);
}

void Schedule::applyFollow(const ReplaceMap& follow) {
  for (auto& e : m_rvs) {
    if (!e.node) continue;
    auto it = follow.find(e.node.get());
    if (it == follow.end()) continue;
    // Keep the new node alive through the entry (a Stmt handle) only if it is a statement.
    e.node = Stmt(static_cast<const StmtNode*>(it->second));
  }
}

void Schedule::settle(const std::string& by) {
  auto& idx = index();
  for (auto& e : m_rvs) {
    if (e.kind == Value::Kind::ExprRV || !e.removedBy.empty()) continue;
    if (e.node && idx.parent.count(e.node.get())) {
      e.name = e.kind == Value::Kind::Loop
                   ? static_cast<const ForNode*>(e.node.get())->loopVar->name
                   : static_cast<const BlockNode*>(e.node.get())->name;
      continue;
    }
    const IRNode* found = nullptr;
    if (e.node && e.kind == Value::Kind::Loop) {
      auto it = idx.loopByVar.find(static_cast<const ForNode*>(e.node.get())->loopVar.get());
      if (it != idx.loopByVar.end()) found = it->second;
    } else if (e.node && e.kind == Value::Kind::Block) {
      auto it = idx.blocksByName.find(static_cast<const BlockNode*>(e.node.get())->name);
      if (it != idx.blocksByName.end() && it->second.size() == 1) found = it->second[0];
    }
    if (found) {
      e.node = Stmt(static_cast<const StmtNode*>(found));
    } else {
      e.node = Stmt();
      e.removedBy = by;
    }
  }
}

void Schedule::record(const std::string& kindName, std::vector<Value> inputs,
                      std::vector<Value> outputs, Value decision) {
  if (m_silent > 0) return;
  const InstructionKind* kind = findInstructionKind(kindName);
  LOOM_ICHECK(kind) << "record: unregistered instruction kind '" << kindName << "'";
  std::string where = m_span.defined()
                          ? " at line " + std::to_string(m_span.line)
                          : " (instruction " + std::to_string(m_trace.insts.size() + 1) + ")";
  settle(kindName + where);
  m_trace.insts.push_back(
      {kind, std::move(inputs), std::move(outputs), std::move(decision), m_span});
}

} // namespace loom::tir
