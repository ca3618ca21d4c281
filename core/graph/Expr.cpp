// Graph IR builders, post-order traversal and dtype conversions.
#include "core/graph/Expr.h"

#include <cstring>
#include <unordered_set>

#include "core/graph/Op.h"
#include "core/graph/OpsInternal.h"
#include "core/support/Error.h"

namespace loom::graph {

Function Module::main() const {
  auto it = functions.find("main");
  return it == functions.end() ? Function() : it->second;
}

DataType toDataType(runtime::DType t) {
  return DataType(DataType::Code(t.code), t.bits, t.lanes);
}
runtime::DType toDType(DataType t) {
  return runtime::DType{uint8_t(t.code()), uint8_t(t.bits()), uint16_t(t.lanes())};
}

Var makeVar(std::string name, Type annotation) {
  auto* n = new VarNode;
  n->name = std::move(name);
  n->annotation = std::move(annotation);
  n->checkedType = n->annotation;
  return Var(n);
}

Constant makeConstant(runtime::NDArray data, std::string name) {
  LOOM_ICHECK(data.defined()) << "constant without data";
  auto* n = new ConstantNode;
  n->checkedType = tensorType(data.shape(), toDataType(data.dtype()));
  n->data = std::move(data);
  n->name = std::move(name);
  return Constant(n);
}

Constant makeScalar(double value, DataType dtype) {
  HostTensor h({}, dtype);
  h.v[0] = value;
  return makeConstant(toNDArray(h));
}

Call makeCall(const std::string& opName, std::vector<Expr> args, Attrs attrs,
              std::string nodeName) {
  const OpDef* op = findOp(opName);
  LOOM_ICHECK(op) << "no op registered as '" << opName << "'";
  return makeCall(op, std::move(args), std::move(attrs), std::move(nodeName));
}

Call makeCall(const OpDef* op, std::vector<Expr> args, Attrs attrs, std::string nodeName) {
  auto* n = new CallNode;
  Call call(n);
  n->op = op;
  n->name = std::move(nodeName);
  for (const Expr& a : args)
    LOOM_ICHECK(a.defined()) << op->name << ": undefined argument";
  n->args = std::move(args);
  if (op->numInputs >= 0 && int(n->args.size()) != op->numInputs)
    LOOM_TYPE_FAIL(*n) << "expects " << op->numInputs << " argument(s), got " << n->args.size();
  if (op->numInputs < 0 && n->args.empty()) LOOM_TYPE_FAIL(*n) << "expects at least one argument";
  for (const auto& [name, value] : attrs.values()) {
    const AttrSpec* spec = op->findAttr(name);
    if (!spec) LOOM_TYPE_FAIL(*n) << "unknown attribute '" << name << "'";
    if (spec->kind != attrKind(value))
      LOOM_TYPE_FAIL(*n) << "attribute '" << name << "' must be " << attrKindName(spec->kind)
                         << ", got " << attrKindName(attrKind(value));
  }
  for (const AttrSpec& spec : op->attrs) {
    if (attrs.has(spec.name)) continue;
    if (!spec.defaultValue)
      LOOM_TYPE_FAIL(*n) << "missing required attribute '" << spec.name << "'";
    attrs.set(spec.name, *spec.defaultValue);
  }
  n->attrs = std::move(attrs);
  return call;
}

Call makeFnCall(Function fn, std::vector<Expr> args) {
  auto* n = new CallNode;
  n->fn = std::move(fn);
  n->args = std::move(args);
  return Call(n);
}

Tuple makeTuple(std::vector<Expr> fields) {
  auto* n = new TupleNode;
  n->fields = std::move(fields);
  return Tuple(n);
}

TupleGetItem makeTupleGetItem(Expr tuple, int index) {
  auto* n = new TupleGetItemNode;
  n->tuple = std::move(tuple);
  n->index = index;
  return TupleGetItem(n);
}

Function makeFunction(std::vector<Var> params, Expr body, bool primitive, std::string name) {
  auto* n = new FunctionNode;
  n->params = std::move(params);
  n->body = std::move(body);
  n->primitive = primitive;
  n->name = std::move(name);
  return Function(n);
}

Call withArgs(const CallNode& call, std::vector<Expr> args) {
  auto* n = new CallNode;
  n->op = call.op;
  n->fn = call.fn;
  n->args = std::move(args);
  n->attrs = call.attrs;
  n->name = call.name;
  n->span = call.span;
  return Call(n);
}

std::string calleeName(const CallNode& call) {
  if (call.op) return call.op->name;
  return call.fn.defined() && !call.fn->name.empty() ? call.fn->name : "fn";
}

std::vector<Expr> postOrder(const Expr& root, bool intoFunctions) {
  std::vector<Expr> out;
  std::unordered_set<const ExprNode*> seen;
  // Iterative DFS: (node, next child index).
  std::vector<std::pair<Expr, size_t>> stack;
  auto children = [&](const Expr& e) {
    std::vector<Expr> c;
    if (auto* call = e.as<CallNode>()) {
      c.insert(c.end(), call->args.begin(), call->args.end());
      if (call->fn.defined()) c.push_back(Expr(call->fn));
    } else if (auto* t = e.as<TupleNode>()) {
      c = t->fields;
    } else if (auto* g = e.as<TupleGetItemNode>()) {
      c.push_back(g->tuple);
    } else if (auto* f = e.as<FunctionNode>(); f && (intoFunctions || e.same_as(root))) {
      for (const Var& p : f->params)
        c.push_back(Expr(p));
      c.push_back(f->body);
    }
    return c;
  };
  if (!root.defined()) return out;
  stack.push_back({root, 0});
  seen.insert(root.get());
  std::vector<std::vector<Expr>> kids{children(root)};
  while (!stack.empty()) {
    auto& [e, i] = stack.back();
    std::vector<Expr>& k = kids.back();
    if (i < k.size()) {
      Expr c = k[i++];
      if (seen.insert(c.get()).second) {
        kids.push_back(children(c));
        stack.push_back({c, 0});
      }
      continue;
    }
    out.push_back(e);
    stack.pop_back();
    kids.pop_back();
  }
  return out;
}

} // namespace loom::graph
