// The variables a statement uses but does not define: what a parallel closure captures (codegen/ only).
#pragma once
#include <unordered_set>
#include <vector>

#include "core/tir/Visitor.h"

namespace loom::codegen {

/// Variables a statement uses but does not define (what a parallel closure must capture).
class FreeVars : public tir::IRVisitor {
public:
  std::vector<const tir::VarNode*> order;
  std::unordered_set<const tir::VarNode*> used, defined;

  void use(const tir::Var& v) {
    if (v.defined() && used.insert(v.get()).second) order.push_back(v.get());
  }
  void useBuffer(const tir::Buffer& b) {
    use(b->data);
    if (b->elemOffset.defined()) visitExpr(b->elemOffset);
    for (auto& e : b->shape) visitExpr(e);
    for (auto& e : b->strides) visitExpr(e);
  }
  void visit(const tir::VarNode* op) override { use(tir::Var(op)); }
  void visit(const tir::LetNode* op) override {
    defined.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const tir::BufferLoadNode* op) override {
    useBuffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const tir::BufferStoreNode* op) override {
    useBuffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const tir::LetStmtNode* op) override {
    defined.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const tir::AllocateNode* op) override {
    defined.insert(op->bufferVar.get());
    IRVisitor::visit(op);
  }
  void visit(const tir::DeclBufferNode* op) override {
    useBuffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const tir::ForNode* op) override {
    defined.insert(op->loopVar.get());
    IRVisitor::visit(op);
  }

  std::vector<const tir::VarNode*> result() const {
    std::vector<const tir::VarNode*> out;
    for (auto* v : order)
      if (!defined.count(v)) out.push_back(v);
    return out;
  }
};

/// The intrinsic a team loop calls between its phases: loom_backend_parallel_barrier with the
/// closure's task id and count; 0 when every task has its own thread, -1 when the launch ran
/// its tasks one after another (nested, single-threaded, or a concurrent launch) or outside any
/// parallel loop. A parallel loop whose body calls it launches exactly `extent` tasks (a team),
/// task i running iteration i, so the callers can split work by the loop variable.
inline constexpr const char* kParallelBarrier = "loom_parallel_barrier";

/// Whether `s` calls kParallelBarrier.
inline bool callsParallelBarrier(const tir::Stmt& s) {
  bool found = false;
  tir::postOrderVisit(s, [&](const tir::IRNode* n) {
    if (auto* c = dynamic_cast<const tir::CallNode*>(n); c && c->op == kParallelBarrier) found = true;
  });
  return found;
}

}  // namespace loom::codegen
