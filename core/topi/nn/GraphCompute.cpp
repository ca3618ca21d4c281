// Registration of every graph op's TE compute, and the helpers the op family files share.
#include "core/topi/nn/GraphCompute.h"

#include <mutex>
#include <unordered_map>

#include "core/graph/SymDim.h"
#include "core/tir/Printer.h"

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
  for (const graph::Dim& d : tt->shape)
    if (!d.isStatic() && d.name.empty())
      LOOM_THROW(UnsupportedError) << graph::callDescription(call) << ": unknown dim in " << graph::typeStr(t)
                                   << " (name it or give static input shapes)";
  return *tt;
}

Var symbolIndexVar(const std::string& name) {
  static std::mutex m;
  static std::unordered_map<std::string, Var> vars;
  std::lock_guard<std::mutex> lock(m);
  auto it = vars.find(name);
  if (it != vars.end()) return it->second;
  Var v = tir::makeVar(name, DataType::Int(32));
  vars.emplace(name, v);
  return v;
}

namespace {

/// An int64 dim expression over graph::symbolVar as int32 over symbolIndexVar.
Expr toIndexExpr(const tir::Expr& e) {
  if (const int64_t* v = tir::asConstInt(e)) return ci(*v);
  if (auto* var = e.as<tir::VarNode>()) return symbolIndexVar(var->name);
  if (auto* b = e.as<tir::BinaryNode>()) return tir::binary(b->op, toIndexExpr(b->a), toIndexExpr(b->b));
  if (auto* c = e.as<tir::CastNode>()) return toIndexExpr(c->value);
  LOOM_THROW(UnsupportedError) << "symbolic dim expression " << tir::printExpr(e) << " has no index form";
}

}  // namespace

Expr indexExprOfDim(const graph::Dim& d) {
  if (d.isStatic()) return ci(d.value);
  tir::Expr e = graph::dimExpr(d);
  LOOM_ICHECK(e.defined()) << "unknown dim";
  return toIndexExpr(e);
}

std::vector<Expr> teShape(const graph::TensorTypeNode& t) {
  std::vector<Expr> s;
  for (const graph::Dim& d : t.shape) s.push_back(indexExprOfDim(d));
  return s;
}

/// The extents of `t`, -1 where symbolic (broadcasting treats those as not 1).
std::vector<int64_t> extentsOrSymbolic(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (const Expr& e : t->shape) {
    const int64_t* v = tir::asConstInt(e);
    s.push_back(v ? *v : -1);
  }
  return s;
}

Expr extentProduct(const std::vector<Expr>& extents) {
  int64_t k = 1;
  Expr symbolic;
  for (const Expr& e : extents) {
    if (const int64_t* v = tir::asConstInt(e))
      k *= *v;
    else
      symbolic = symbolic.defined() ? symbolic * e : e;
  }
  if (!symbolic.defined()) return ci(k);
  return k == 1 ? symbolic : symbolic * ci(k);
}

Expr extentValue(DataType t, const Expr& n) {
  if (const int64_t* v = tir::asConstInt(n)) return tir::makeConst(t, double(*v));
  return tir::cast(t, n);
}

DataType sumAccumulator(DataType t, const Expr& count) {
  constexpr int64_t kWideSumCount = 4096;
  const int64_t* n = tir::asConstInt(count);
  return t == DataType::Float(32) && (!n || *n >= kWideSumCount) ? DataType::Float(64) : t;
}

std::vector<int64_t> extents(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (const Expr& e : t->shape) {
    const int64_t* v = tir::asConstInt(e);
    // An operand this kernel needs static (a weight that is a graph input with symbolic dims):
    // the user's input, not a compiler fault.
    if (!v)
      LOOM_THROW(UnsupportedError) << "this operator needs static extents for its operand '" << t->name
                                   << "', whose shape is symbolic; give static shapes with --input-shapes";
    s.push_back(*v);
  }
  return s;
}

Expr broadcastLoad(const te::Tensor& t, const std::vector<Var>& i) {
  std::vector<int64_t> ext = extentsOrSymbolic(t);
  size_t off = i.size() - ext.size();
  LOOM_ICHECK(i.size() >= ext.size()) << "broadcast of '" << t->name << "' to a lower rank";
  std::vector<Expr> idx;
  for (size_t d = 0; d < ext.size(); ++d) idx.push_back(ext[d] == 1 ? ci(0) : Expr(i[d + off]));
  return t(idx);
}

Expr broadcastLoad(const te::Tensor& t, const std::vector<Var>& i, const std::vector<te::Tensor>& operands) {
  std::vector<int64_t> ext = extentsOrSymbolic(t);
  size_t off = i.size() - ext.size();
  LOOM_ICHECK(i.size() >= ext.size()) << "broadcast of '" << t->name << "' to a lower rank";
  // The output's extent at each of t's dims: the largest extent of the operands there.
  std::vector<int64_t> outExt = ext;  // -1 where symbolic
  for (const te::Tensor& o : operands) {
    std::vector<int64_t> oe = extentsOrSymbolic(o);
    for (size_t d = 0; d < ext.size(); ++d) {
      size_t od = d + off;  // dim of the output
      if (od + oe.size() >= i.size()) {
        int64_t e = oe[od + oe.size() - i.size()];
        outExt[d] = outExt[d] < 0 || e < 0 ? -1 : std::max(outExt[d], e);  // -1: symbolic, not 1
      }
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
