// Tensors, placeholder() and compute(): building the TE dataflow graph.
#include "core/te/Tensor.h"

#include <mutex>
#include <unordered_map>

#include "core/support/Error.h"
#include "core/tir/Visitor.h"

namespace loom::te {

namespace {
/// Which live tensor owns which buffer, so compute() can find the tensors a body reads. Entries
/// are removed when the tensor dies; a lookup happens only while the caller holds the tensor
/// (through the body that loads it), so it cannot race with that tensor's destruction.
struct BufferRegistry {
  std::mutex mutex;
  std::unordered_map<const tir::BufferNode*, const TensorNode*> owner;
};
BufferRegistry& registry() {
  // Never destroyed: tensors held by other statics may die after it at exit.
  static BufferRegistry* r = new BufferRegistry();
  return *r;
}

Tensor makeTensor(std::string name, std::vector<Expr> shape, DataType dtype, Operation op) {
  auto* n = new TensorNode();
  n->buffer = tir::makeBuffer(name, dtype, shape);
  n->name = std::move(name);
  n->shape = std::move(shape);
  n->dtype = dtype;
  n->op = std::move(op);
  Tensor t(n);
  std::lock_guard lock(registry().mutex);
  registry().owner[n->buffer.get()] = n;
  return t;
}

void checkShape(const std::vector<Expr>& shape, const std::string& what) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!shape[d].defined() || !(shape[d].dtype().isIntegral()))
      LOOM_THROW(TypeError) << what << ": dimension " << d << " of the shape is not an integer";
    if (auto* c = tir::asConstInt(shape[d]); c && *c <= 0)
      LOOM_THROW(ValueError) << what << ": dimension " << d << " has extent " << *c
                             << " (must be positive)";
  }
}
} // namespace

TensorNode::~TensorNode() {
  std::lock_guard lock(registry().mutex);
  auto it = registry().owner.find(buffer.get());
  if (it != registry().owner.end() && it->second == this) registry().owner.erase(it);
}

Tensor tensorOfBuffer(const tir::Buffer& b) {
  std::lock_guard lock(registry().mutex);
  auto it = registry().owner.find(b.get());
  return it == registry().owner.end() ? Tensor() : Tensor(it->second);
}

Expr Tensor::operator()(std::vector<Expr> indices) const {
  LOOM_ICHECK(defined()) << "element access of an undefined tensor";
  if (indices.size() != get()->ndim())
    LOOM_THROW(ValueError) << "tensor '" << get()->name << "' has " << get()->ndim()
                           << " dimensions but is indexed with " << indices.size();
  for (size_t d = 0; d < indices.size(); ++d)
    if (!indices[d].defined() || !indices[d].dtype().isIntegral())
      LOOM_THROW(TypeError) << "tensor '" << get()->name << "': index " << d
                            << " is not an integer";
  return tir::bufferLoad(get()->buffer, std::move(indices));
}

const std::vector<IterVar>& ComputeOpNode::reduceAxis() const {
  static const std::vector<IterVar> none;
  return body.isReduce() ? body.reduce().axis : none;
}

Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  checkShape(shape, "placeholder '" + name + "'");
  auto* op = new PlaceholderOpNode();
  op->name = name;
  return makeTensor(std::move(name), std::move(shape), dtype, Operation(op));
}

void throwArityMismatch(const std::string& name, size_t rank, size_t arity) {
  LOOM_THROW(ValueError) << "compute '" << name << "': the shape has " << rank
                         << " dimensions but the body takes " << arity << " indices";
}

Tensor compute(std::vector<Expr> shape, const FCompute& f, std::string name, std::string tag,
               tir::Annotations attrs, std::vector<std::string> axisNames) {
  std::string what = "compute '" + name + "'";
  checkShape(shape, what);
  if (!axisNames.empty() && axisNames.size() != shape.size())
    LOOM_THROW(ValueError) << what << ": " << axisNames.size() << " axis names for " << shape.size()
                           << " dimensions";
  static const char* const kShort[] = {"i", "j", "k"};
  std::vector<IterVar> axis;
  std::vector<tir::Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string n = !axisNames.empty()  ? axisNames[d]
                    : shape.size() <= 3 ? std::string(kShort[d])
                                        : "i" + std::to_string(d);
    tir::Var v = tir::makeVar(n, shape[d].dtype());
    axis.emplace_back(v, Range(tir::intImm(shape[d].dtype(), 0), shape[d]), tir::IterType::DataPar);
    vars.push_back(v);
  }
  ComputeBody body = f(vars);
  if (body.isReduce() ? !body.reduce().source.defined() : !body.expr().defined())
    LOOM_THROW(ValueError) << what << ": the body is undefined";

  auto* op = new ComputeOpNode();
  op->name = name;
  op->tag = std::move(tag);
  op->attrs = std::move(attrs);
  op->axis = std::move(axis);
  op->body = body;
  // The tensors the body reads, in order of first use.
  auto collect = [&](const Expr& e) {
    tir::postOrderVisit(e, [&](const tir::IRNode* n) {
      if (n->nodeKind != tir::NodeKind::BufferLoad) return;
      auto* load = static_cast<const tir::BufferLoadNode*>(n);
      for (auto& t : op->inputs)
        if (t->buffer.same_as(load->buffer)) return;
      Tensor t = tensorOfBuffer(load->buffer);
      if (!t.defined())
        LOOM_THROW(ValueError) << what << " reads buffer '" << load->buffer->name
                               << "', which is not a te tensor";
      op->inputs.push_back(t);
    });
  };
  if (body.isReduce()) {
    collect(body.reduce().source);
    collect(body.reduce().condition);
    for (auto& r : body.reduce().axis) {
      collect(r.dom.min);
      collect(r.dom.extent);
    }
  } else {
    collect(body.expr());
  }
  DataType dtype = body.dtype();
  return makeTensor(std::move(name), std::move(shape), dtype, Operation(op));
}

} // namespace loom::te
