// Registration of every graph op's TE compute, and the helpers the op family files share.
#include "core/topi/nn/GraphCompute.h"

#include <mutex>

#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi {

void registerGraphComputes() {
  static std::once_flag once;
  std::call_once(once, [] {
    nn::registerElemwiseComputes();
    nn::registerNNComputes();
    nn::registerWinogradComputes();
    nn::registerTransformComputes();
    nn::registerReduceComputes();
    nn::registerScatterComputes();
    nn::registerImageComputes();
    nn::registerQnnDot4Computes();
  });
}

namespace nn {

const graph::TensorTypeNode& staticTensor(const graph::Type& t, const graph::CallNode& call) {
  const auto* tt = t.as<graph::TensorTypeNode>();
  if (!tt) LOOM_THROW(UnsupportedError) << graph::callDescription(call) << ": tuple type where a tensor was expected";
  if (!tt->isStatic())
    LOOM_THROW(UnsupportedError) << graph::callDescription(call) << ": symbolic shape " << graph::typeStr(t)
                                 << " (give static input shapes)";
  return *tt;
}

std::vector<Expr> teShape(const graph::TensorTypeNode& t) {
  std::vector<Expr> s;
  for (int64_t d : t.staticShape()) s.push_back(ci(d));
  return s;
}

std::vector<int64_t> extents(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (const Expr& e : t->shape) {
    const int64_t* v = tir::asConstInt(e);
    LOOM_ICHECK(v) << "tensor '" << t->name << "' has a symbolic shape";
    s.push_back(*v);
  }
  return s;
}

Expr broadcastLoad(const te::Tensor& t, const std::vector<Var>& i) {
  std::vector<int64_t> ext = extents(t);
  size_t off = i.size() - ext.size();
  LOOM_ICHECK(i.size() >= ext.size()) << "broadcast of '" << t->name << "' to a lower rank";
  std::vector<Expr> idx;
  for (size_t d = 0; d < ext.size(); ++d) idx.push_back(ext[d] == 1 ? ci(0) : Expr(i[d + off]));
  return t(idx);
}

Expr broadcastLoad(const te::Tensor& t, const std::vector<Var>& i, const std::vector<te::Tensor>& operands) {
  std::vector<int64_t> ext = extents(t);
  size_t off = i.size() - ext.size();
  LOOM_ICHECK(i.size() >= ext.size()) << "broadcast of '" << t->name << "' to a lower rank";
  // The output's extent at each of t's dims: the largest extent of the operands there.
  std::vector<int64_t> outExt = ext;
  for (const te::Tensor& o : operands) {
    std::vector<int64_t> oe = extents(o);
    for (size_t d = 0; d < ext.size(); ++d) {
      size_t od = d + off;  // dim of the output
      if (od + oe.size() >= i.size()) outExt[d] = std::max(outExt[d], oe[od + oe.size() - i.size()]);
    }
  }
  std::vector<Expr> idx;
  for (size_t d = 0; d < ext.size(); ++d)
    idx.push_back(ext[d] == 1 && outExt[d] != 1 ? ci(0) : Expr(i[d + off]));
  return t(idx);
}

int64_t normAxis(int64_t axis, int64_t ndim) { return axis < 0 ? axis + ndim : axis; }

void setCompute(const std::string& name, graph::TECompute f) {
  graph::OpDef* op = graph::mutableOp(name);
  LOOM_ICHECK(op) << "no graph op '" << name << "' to attach a compute to";
  op->compute = std::move(f);
}

void setSimple(const std::string& name, Body body, std::string tag) {
  setCompute(name, [body, tag, name](const graph::CallNode& call, const std::vector<te::Tensor>& in,
                                     const graph::Type& outType) -> std::vector<te::Tensor> {
    const graph::TensorTypeNode& out = staticTensor(outType, call);
    std::string tname = "T_" + name.substr(name.find('.') == std::string::npos ? 0 : name.find('.') + 1);
    return {te::compute(
        teShape(out), [&](const std::vector<Var>& i) -> te::ComputeBody { return body(call, in, i); }, tname, tag)};
  });
}

}  // namespace nn
}  // namespace loom::topi
