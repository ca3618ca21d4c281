// PrimFunc and IRModule helpers.
#include "core/tir/Function.h"

#include "core/support/Error.h"
#include "core/tir/Op.h"

namespace loom::tir {

Buffer PrimFuncNode::bufferOf(const Var& v) const {
  for (auto& [p, b] : bufferMap)
    if (p.same_as(v)) return b;
  return Buffer();
}

Buffer PrimFuncNode::paramBuffer(size_t i) const {
  LOOM_ICHECK(i < params.size()) << "param index " << i << " of " << params.size();
  Buffer b = bufferOf(params[i]);
  LOOM_ICHECK(b.defined()) << "param " << params[i]->name << " has no buffer";
  return b;
}

PrimFunc makePrimFunc(std::string name, std::vector<Var> params,
                      std::vector<std::pair<Var, Buffer>> bufferMap, Stmt body, Annotations attrs) {
  auto* n = new PrimFuncNode();
  attrs["global_symbol"] = stringImm(name);
  n->name = std::move(name);
  n->params = std::move(params);
  n->bufferMap = std::move(bufferMap);
  n->body = std::move(body);
  n->attrs = std::move(attrs);
  return PrimFunc(n);
}

PrimFunc withBody(const PrimFunc& f, Stmt body) {
  auto* n = new PrimFuncNode(*f.get());
  n->body = std::move(body);
  return PrimFunc(n);
}

PrimFunc IRModule::lookup(const std::string& name) const {
  auto it = functions.find(name);
  return it == functions.end() ? PrimFunc() : it->second;
}

PrimFunc IRModule::mainFunction() const {
  if (auto f = lookup("main")) return f;
  LOOM_ICHECK(functions.size() == 1) << "module has " << functions.size() << " functions and no main";
  return functions.begin()->second;
}

}  // namespace loom::tir
