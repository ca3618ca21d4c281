// The op registry: a process-wide table filled once with every op family (see OpsInternal.h).
#include "core/graph/Op.h"
#include "core/graph/qnn/Qnn.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/graph/DataDependent.h"
#include "core/graph/OpsInternal.h"

namespace loom::graph {

const char* opPatternName(OpPattern p) {
  switch (p) {
  case OpPattern::ElemWise:
    return "elemwise";
  case OpPattern::Broadcast:
    return "broadcast";
  case OpPattern::Injective:
    return "injective";
  case OpPattern::CommReduce:
    return "comm_reduce";
  case OpPattern::OutEWiseFusable:
    return "out_elemwise_fusable";
  case OpPattern::Tuple:
    return "tuple";
  case OpPattern::Opaque:
    return "opaque";
  }
  return "?";
}

const AttrSpec* OpDef::findAttr(const std::string& n) const {
  for (const AttrSpec& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

namespace {
/// The table itself; registry() fills it with the built-in ops on first use.
std::map<std::string, OpDef>& rawOpTable() {
  static std::map<std::string, OpDef> ops;
  return ops;
}

/// True while the built-in families register (registerOp must not re-enter call_once then).
bool g_registeringBuiltins = false;

std::map<std::string, OpDef>& registry() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_registeringBuiltins = true;
    registerNNOps();
    registerElemwiseOps();
    registerTransformOps();
    registerReduceOps();
    registerRecurrentOps();
    registerScatterOps();
    registerImageOps();
    registerDataDependentOps();
    registerLayoutOps();
    qnn::registerQnnOps();
    g_registeringBuiltins = false;
  });
  return rawOpTable();
}
} // namespace

void registerOp(OpDef def) {
  // Built-ins first, so that a later registration under the same name replaces them.
  if (!g_registeringBuiltins) registry();
  std::string name = def.name;
  rawOpTable()[name] = std::move(def);
}

const OpDef* findOp(const std::string& name) {
  auto& ops = registry();
  auto it = ops.find(name);
  return it == ops.end() ? nullptr : &it->second;
}

const OpDef& getOp(const std::string& name) {
  const OpDef* op = findOp(name);
  LOOM_ICHECK(op) << "no op registered as '" << name << "'";
  return *op;
}

OpDef* mutableOp(const std::string& name) {
  auto& ops = registry();
  auto it = ops.find(name);
  return it == ops.end() ? nullptr : &it->second;
}

std::vector<const OpDef*> allOps() {
  std::vector<const OpDef*> out;
  for (auto& [name, def] : registry())
    out.push_back(&def);
  return out;
}

std::string callDescription(const CallNode& call) {
  std::string s = calleeName(call);
  if (!call.name.empty()) s += " (node '" + call.name + "')";
  return s;
}

} // namespace loom::graph
