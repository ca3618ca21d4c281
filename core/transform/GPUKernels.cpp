// GPU lowering: barrier insertion (thread-sync), the host/device split, and the launch-limit verifier.
#include "core/transform/GPUKernels.h"

#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

bool isThreadExtent(const AttrStmtNode* a) { return a->key == "thread_extent"; }

std::string threadTagOf(const AttrStmtNode* a) {
  auto* v = a->node.as<VarNode>();
  return v ? v->name : std::string();
}

/// Shared buffers (by handle) a statement reads and writes.
struct SharedAccess : IRVisitor {
  const std::unordered_set<const VarNode*>& shared;
  std::set<const VarNode*> reads, writes;
  explicit SharedAccess(const std::unordered_set<const VarNode*>& s) : shared(s) {}
  void visit(const BufferLoadNode* op) override {
    if (shared.count(op->buffer->data.get())) reads.insert(op->buffer->data.get());
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    if (shared.count(op->buffer->data.get())) writes.insert(op->buffer->data.get());
    IRVisitor::visit(op);
  }
};

bool intersects(const std::set<const VarNode*>& a, const std::set<const VarNode*>& b) {
  for (auto* x : a)
    if (b.count(x)) return true;
  return false;
}

Stmt barrier() { return evaluate(call(DataType::Void(), kThreadSync, {stringImm("shared")})); }

class ThreadSyncInserter : public IRMutator {
public:
  std::unordered_set<const VarNode*> shared;

protected:
  using IRMutator::visit;

  Stmt visit(const AttrStmtNode* n, const Stmt& self) override {
    if (!isThreadExtent(n)) return IRMutator::visit(n, self);
    ++m_inKernel;
    Stmt r = IRMutator::visit(n, self);
    --m_inKernel;
    return r;
  }

  Stmt visit(const SeqStmtNode* n, const Stmt& self) override {
    if (!m_inKernel) return IRMutator::visit(n, self);
    std::vector<Stmt> out;
    std::set<const VarNode*> pendingR, pendingW;
    for (auto& c : n->seq) {
      Stmt m = mutate(c);
      SharedAccess acc(shared);
      acc.visitStmt(c);
      if (intersects(acc.reads, pendingW) || intersects(acc.writes, pendingR)) {
        out.push_back(barrier());
        pendingR.clear();
        pendingW.clear();
      }
      out.push_back(m);
      pendingR.insert(acc.reads.begin(), acc.reads.end());
      pendingW.insert(acc.writes.begin(), acc.writes.end());
    }
    return seq(out);
  }

  Stmt visit(const ForNode* n, const Stmt& self) override {
    Stmt r = IRMutator::visit(n, self);
    if (!m_inKernel) return r;
    SharedAccess acc(shared);
    acc.visitStmt(n->body);
    if (!intersects(acc.reads, acc.writes)) return r;
    auto* f = r.as<ForNode>();
    auto* nf = new ForNode(*f);
    nf->body = seq({f->body, barrier()});
    return Stmt(nf);
  }

private:
  int m_inKernel = 0;
};

/// Variables a kernel uses but does not define (thread vars are defined by their attrs).
struct KernelFreeVars : IRVisitor {
  std::vector<Var> order;
  std::unordered_set<const VarNode*> used, defined;
  void use(const Var& v) {
    if (v.defined() && used.insert(v.get()).second) order.push_back(v);
  }
  void useBuffer(const Buffer& b) {
    use(b->data);
    if (b->elemOffset.defined()) visitExpr(b->elemOffset);
  }
  void visit(const VarNode* op) override { use(Var(op)); }
  void visit(const LetNode* op) override {
    defined.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const BufferLoadNode* op) override {
    useBuffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    useBuffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const LetStmtNode* op) override {
    defined.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const AllocateNode* op) override {
    defined.insert(op->bufferVar.get());
    IRVisitor::visit(op);
  }
  void visit(const DeclBufferNode* op) override {
    useBuffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const ForNode* op) override {
    defined.insert(op->loopVar.get());
    IRVisitor::visit(op);
  }
  void visit(const AttrStmtNode* op) override {
    if (isThreadExtent(op))
      if (auto* v = op->node.as<VarNode>()) defined.insert(v);
    IRVisitor::visit(op);
  }
};

int axisOf(const std::string& tag) {
  char c = tag.back();
  return c == 'x' ? 0 : c == 'y' ? 1 : c == 'z' ? 2 : -1;
}

/// Launch shape and shared memory of one kernel body.
struct KernelShape : IRVisitor {
  DeviceKernel* k;
  std::string funcName;
  bool strict = true;  ///< false: skip what cannot be measured instead of refusing it
  explicit KernelShape(DeviceKernel* kernel, std::string fn) : k(kernel), funcName(std::move(fn)) {}
  void visit(const AttrStmtNode* op) override {
    if (isThreadExtent(op)) {
      std::string tag = threadTagOf(op);
      const int64_t* ext = asConstInt(op->value);
      if (!ext && !strict) return IRVisitor::visit(op);
      if (!ext)
        LOOM_THROW_AT(GPUSplitError, op->span) << "'" << funcName << "': the extent of " << tag
                                               << " is not a constant (GPU launches need static shapes)";
      int axis = axisOf(tag);
      if (tag.rfind("blockIdx.", 0) == 0 && axis >= 0) k->grid[size_t(axis)] = std::max(k->grid[size_t(axis)], *ext);
      else if (tag.rfind("threadIdx.", 0) == 0 && axis >= 0) k->block[size_t(axis)] = std::max(k->block[size_t(axis)], *ext);
      else if (strict)
        LOOM_THROW_AT(GPUSplitError, op->span) << "'" << funcName << "': thread axis '" << tag
                                               << "' is not supported by the GPU backends (blockIdx/threadIdx.x/y/z)";
    }
    IRVisitor::visit(op);
  }
  void visit(const AllocateNode* op) override {
    int64_t count = 1;
    for (auto& e : op->extents) {
      const int64_t* c = asConstInt(e);
      if (!c && !strict) return IRVisitor::visit(op);
      if (!c)
        LOOM_THROW_AT(GPUSplitError, op->span) << "'" << funcName << "': buffer '" << op->bufferVar->name
                                               << "' inside a kernel has a dynamic size";
      count *= *c;
    }
    if (op->scope == "shared") k->sharedBytes += count * std::max<int64_t>(1, op->dtype.bytes());
    IRVisitor::visit(op);
  }
};

class Splitter {
public:
  DeviceProgram p;

  void host(const Stmt& s) {
    if (!s.defined()) return;
    switch (s->nodeKind) {
    case NodeKind::SeqStmt:
      for (auto& c : s.as<SeqStmtNode>()->seq) host(c);
      return;
    case NodeKind::DeclBuffer: host(s.as<DeclBufferNode>()->body); return;
    case NodeKind::Evaluate:
      if (s.as<EvaluateNode>()->value.as<IntImmNode>()) return;
      break;
    case NodeKind::AttrStmt: {
      auto* a = s.as<AttrStmtNode>();
      if (isThreadExtent(a)) {
        kernel(s);
        return;
      }
      host(a->body);
      return;
    }
    case NodeKind::Allocate: {
      auto* a = s.as<AllocateNode>();
      // A buffer outside every kernel would be one device buffer for all threads of all kernels;
      // a local (per-thread) or shared (per-block) one, whose uses the lowering placed outside
      // the kernels because they are in several of them, would be wrong there: its region was
      // made per thread or per block (fuzz_difftest seed 20006: a one-element cache of each
      // thread, written by 25 threads of one kernel and read by those of another).
      if (a->scope == "local" || a->scope == "shared")
        LOOM_THROW_AT(GPUSplitError, a->span)
            << "'" << p.func->name << "': buffer '" << a->bufferVar->name << "' of scope " << a->scope
            << " is used by more than one kernel (or outside any); a " << a->scope
            << " buffer lives in one kernel: put its producer and its consumers under the same thread "
               "bindings (compute_at / reverse_compute_at), or make it global";
      int64_t count = 1;
      for (auto& e : a->extents) {
        const int64_t* c = asConstInt(e);
        if (!c)
          LOOM_THROW_AT(GPUSplitError, a->span) << "'" << p.func->name << "': buffer '" << a->bufferVar->name
                                                << "' has a dynamic size";
        count *= *c;
      }
      p.steps.push_back({HostStep::Kind::Alloc, a->bufferVar, a->dtype, count, -1});
      host(a->body);
      p.steps.push_back({HostStep::Kind::Free, a->bufferVar, a->dtype, count, -1});
      return;
    }
    default: break;
    }
    std::string what = s->nodeKind == NodeKind::For ? "loop '" + s.as<ForNode>()->loopVar->name + "'" : "a statement";
    LOOM_THROW_AT(GPUSplitError, s->span)
        << "'" << p.func->name << "': " << what
        << " runs outside any kernel; bind the outer loops of every block to blockIdx/threadIdx";
  }

  void kernel(const Stmt& s) {
    DeviceKernel k;
    k.name = p.func->name + "_kernel" + std::to_string(p.kernels.size());
    k.body = s;
    KernelFreeVars fv;
    fv.visitStmt(s);
    for (auto& v : fv.order)
      if (!fv.defined.count(v.get())) k.params.push_back(v);
    KernelShape shape(&k, p.func->name);
    shape.visitStmt(s);
    p.steps.push_back({HostStep::Kind::Launch, Var(), DataType::Void(), 0, int(p.kernels.size())});
    p.kernels.push_back(std::move(k));
  }
};

}  // namespace

PrimFunc insertThreadSync(const PrimFunc& f) {
  ThreadSyncInserter t;
  postOrderVisit(f->body, [&](const IRNode* n) {
    if (n->nodeKind == NodeKind::Allocate)
      if (auto* a = static_cast<const AllocateNode*>(n))
      if (a->scope == "shared") t.shared.insert(a->bufferVar.get());
  });
  if (t.shared.empty()) return f;
  return updateBody(f, t.mutate(f->body));
}

DeviceProgram splitHostDevice(const PrimFunc& lowered) {
  Splitter s;
  s.p.func = lowered;
  s.host(lowered->body);
  return std::move(s.p);
}

void verifyGPULimits(const DeviceProgram& program, const GPULimits& limits) {
  for (auto& k : program.kernels) {
    int64_t threads = k.block[0] * k.block[1] * k.block[2];
    if (threads > limits.maxThreadsPerBlock)
      LOOM_THROW_AT(GPUThreadLimitError, k.body->span)
          << "kernel '" << k.name << "' asks for " << threads << " threads per block (" << k.block[0] << " x "
          << k.block[1] << " x " << k.block[2] << "); the target allows at most " << limits.maxThreadsPerBlock;
    if (k.sharedBytes > limits.maxSharedMemoryBytes)
      LOOM_THROW_AT(GPUSharedMemoryError, k.body->span)
          << "kernel '" << k.name << "' uses " << k.sharedBytes << " bytes of shared memory per block; the target allows at most "
          << limits.maxSharedMemoryBytes;
  }
}

PrimFunc verifyGPUPass(const PrimFunc& f) {
  // Only the limits: code outside kernels is codegen's to refuse (the CPU can still interpret it).
  DeviceProgram p;
  p.func = f;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s.defined()) return;
    if (auto* a = s.as<AttrStmtNode>(); a && isThreadExtent(a)) {
      DeviceKernel k;
      k.name = f->name + "_kernel" + std::to_string(p.kernels.size());
      k.body = s;
      KernelShape shape(&k, f->name);
      shape.strict = false;
      shape.visitStmt(s);
      p.kernels.push_back(std::move(k));
      return;
    }
    switch (s->nodeKind) {
    case NodeKind::SeqStmt:
      for (auto& c : s.as<SeqStmtNode>()->seq) walk(c);
      return;
    case NodeKind::AttrStmt: walk(s.as<AttrStmtNode>()->body); return;
    case NodeKind::Allocate: walk(s.as<AllocateNode>()->body); return;
    case NodeKind::DeclBuffer: walk(s.as<DeclBufferNode>()->body); return;
    case NodeKind::LetStmt: walk(s.as<LetStmtNode>()->body); return;
    case NodeKind::For: walk(s.as<ForNode>()->body); return;
    case NodeKind::IfThenElse:
      walk(s.as<IfThenElseNode>()->thenCase);
      walk(s.as<IfThenElseNode>()->elseCase);
      return;
    default: return;
    }
  };
  walk(f->body);
  verifyGPULimits(p);
  return f;
}

}  // namespace loom::transform
