// Buffer construction helpers.
#include "core/tir/Buffer.h"

#include "core/tir/Op.h"

namespace loom::tir {

Buffer makeBuffer(std::string name, DataType dtype, std::vector<Expr> shape, std::string scope) {
  auto* n = new BufferNode();
  n->data = makeVar(name, DataType::Handle());
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->elemOffset = intImm(DataType::Int(32), 0);
  n->scope = std::move(scope);
  return Buffer(n);
}

namespace {
template <class F> Buffer copyWith(const Buffer& b, F&& f) {
  auto* n = new BufferNode(*b.get());
  f(*n);
  return Buffer(n);
}
}  // namespace

Buffer withShape(const Buffer& b, std::vector<Expr> shape) {
  return copyWith(b, [&](BufferNode& n) { n.shape = std::move(shape); });
}
Buffer withScope(const Buffer& b, std::string scope) {
  return copyWith(b, [&](BufferNode& n) { n.scope = std::move(scope); });
}
Buffer withName(const Buffer& b, std::string name) {
  return copyWith(b, [&](BufferNode& n) { n.name = std::move(name); });
}

BufferRegion BufferRegion::full(const Buffer& b) {
  std::vector<Range> r;
  for (auto& e : b->shape) r.emplace_back(intImm(e.dtype(), 0), e);
  return BufferRegion(b, std::move(r));
}

}  // namespace loom::tir
