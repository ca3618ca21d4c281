// Trace printing (as a schedule script), JSON round trip and replay.
#include "core/schedule/Trace.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"

namespace loom::tir {

namespace {
char rvPrefix(Value::Kind k) {
  return k == Value::Kind::Block ? 'b' : k == Value::Kind::Loop ? 'l' : 'v';
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string floatText(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  // Prefer the shortest text that reads back exactly.
  for (int p = 1; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, d);
    if (std::strtod(buf, nullptr) == d) {
      s = buf;
      break;
    }
  }
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}
} // namespace

std::string valueToScript(const Value& v, const std::map<int, std::string>& names) {
  switch (v.kind()) {
  case Value::Kind::None:
    return "None";
  case Value::Kind::Bool:
    return v.asBool() ? "True" : "False";
  case Value::Kind::Int:
    return std::to_string(v.asInt());
  case Value::Kind::Float:
    return floatText(v.asFloat());
  case Value::Kind::String:
    return quote(v.asString());
  case Value::Kind::Block:
  case Value::Kind::Loop:
  case Value::Kind::ExprRV: {
    auto it = names.find(v.rvId());
    return it != names.end() ? it->second
                             : std::string(1, rvPrefix(v.kind())) + "?" + std::to_string(v.rvId());
  }
  case Value::Kind::List: {
    std::string s = "[";
    for (size_t i = 0; i < v.asList().size(); ++i)
      s += (i ? ", " : "") + valueToScript(v.asList()[i], names);
    return s + "]";
  }
  case Value::Kind::Lambda:
    return v.asLambda() ? v.asLambda()->str() : "None";
  }
  return "None";
}

std::string Trace::str() const {
  std::map<int, std::string> names;
  int counter = 0;
  std::string out;
  for (auto& inst : insts) {
    std::string lhs;
    for (size_t i = 0; i < inst.outputs.size(); ++i) {
      const Value& o = inst.outputs[i];
      std::string n = std::string(1, rvPrefix(o.kind())) + std::to_string(counter++);
      names[o.rvId()] = n;
      lhs += (i ? ", " : "") + n;
    }
    if (inst.kind->returnsList && inst.outputs.size() == 1) lhs += ",";
    std::string args;
    for (size_t i = 0; i < inst.kind->params.size() && i < inst.inputs.size(); ++i) {
      const ParamSpec& p = inst.kind->params[i];
      if (p.keyword && p.defaultValue && *p.defaultValue == inst.inputs[i]) continue;
      if (p.variadic && inst.inputs[i].kind() == Value::Kind::List) {
        for (auto& item : inst.inputs[i].asList())
          args += (args.empty() ? "" : ", ") + valueToScript(item, names);
        continue;
      }
      args += (args.empty() ? "" : ", ") + (p.keyword ? p.name + "=" : "") +
              valueToScript(inst.inputs[i], names);
    }
    if (inst.kind->sampling && !inst.decision.isNone())
      args += (args.empty() ? "" : ", ") + ("decision=" + valueToScript(inst.decision, names));
    out += (lhs.empty() ? "" : lhs + " = ") + "sch." + inst.kind->name + "(" + args + ")\n";
  }
  return out;
}

namespace {
nlohmann::json valueToJson(const Value& v, const std::map<int, std::string>& names) {
  switch (v.kind()) {
  case Value::Kind::None:
    return nullptr;
  case Value::Kind::Bool:
    return v.asBool();
  case Value::Kind::Int:
    return v.asInt();
  case Value::Kind::Float:
    return v.asFloat();
  case Value::Kind::String:
    return v.asString();
  case Value::Kind::Block:
  case Value::Kind::Loop:
  case Value::Kind::ExprRV:
    return {{"rv", valueToScript(v, names)}};
  case Value::Kind::List: {
    auto a = nlohmann::json::array();
    for (auto& e : v.asList())
      a.push_back(valueToJson(e, names));
    return a;
  }
  case Value::Kind::Lambda:
    return {{"lambda", v.asLambda()->str()}};
  }
  return nullptr;
}

Value valueFromJson(const nlohmann::json& j, const std::map<std::string, Value>& rvs) {
  if (j.is_null()) return Value();
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(j.get<int64_t>());
  if (j.is_number_float()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  if (j.is_array()) {
    std::vector<Value> items;
    for (auto& e : j)
      items.push_back(valueFromJson(e, rvs));
    return Value(std::move(items));
  }
  if (j.is_object() && j.contains("rv") && j["rv"].is_string()) {
    auto it = rvs.find(j["rv"].get<std::string>());
    if (it == rvs.end())
      LOOM_THROW(ParseError) << "trace JSON uses '" << j["rv"].get<std::string>()
                             << "' before defining it";
    return it->second;
  }
  if (j.is_object() && j.contains("lambda") && j["lambda"].is_string()) {
    ScriptExprPtr e = parseScriptExpr(j["lambda"].get<std::string>());
    if (e->kind != ScriptExpr::Kind::Lambda)
      LOOM_THROW(ParseError) << "trace JSON: not a lambda: " << j["lambda"];
    auto f = std::make_shared<ScriptLambda>();
    f->params = e->params;
    f->body = e->items.at(0);
    return Value(std::shared_ptr<const ScriptLambda>(f));
  }
  LOOM_THROW(ParseError) << "trace JSON: unexpected value " << j.dump();
}

Value mapRVs(const Value& v, const std::map<int, Value>& m) {
  if (v.isRV()) {
    auto it = m.find(v.rvId());
    LOOM_ICHECK(it != m.end()) << "trace uses an RV it never defined";
    return it->second;
  }
  if (v.kind() == Value::Kind::List) {
    std::vector<Value> items;
    for (auto& e : v.asList())
      items.push_back(mapRVs(e, m));
    return Value(std::move(items));
  }
  return v;
}
} // namespace

nlohmann::json Trace::toJson() const {
  std::map<int, std::string> names;
  int counter = 0;
  auto arr = nlohmann::json::array();
  for (auto& inst : insts) {
    nlohmann::json ji;
    ji["kind"] = inst.kind->name;
    auto in = nlohmann::json::array();
    for (auto& v : inst.inputs)
      in.push_back(valueToJson(v, names));
    ji["inputs"] = in;
    auto out = nlohmann::json::array();
    for (auto& o : inst.outputs) {
      std::string n = std::string(1, rvPrefix(o.kind())) + std::to_string(counter++);
      names[o.rvId()] = n;
      out.push_back(n);
    }
    ji["outputs"] = out;
    if (!inst.decision.isNone()) ji["decision"] = valueToJson(inst.decision, names);
    arr.push_back(ji);
  }
  return {{"insts", arr}};
}

Trace Trace::fromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("insts") || !j["insts"].is_array())
    LOOM_THROW(ParseError) << "trace JSON must be an object with an array \"insts\"";
  Trace t;
  std::map<std::string, Value> rvs;
  int nextId = 0;
  for (auto& ji : j["insts"]) {
    if (!ji.is_object() || !ji.contains("kind") || !ji["kind"].is_string())
      LOOM_THROW(ParseError) << "trace JSON: instruction without a \"kind\": " << ji.dump();
    std::string kname = ji["kind"].get<std::string>();
    const InstructionKind* kind = findInstructionKind(kname);
    if (!kind) LOOM_THROW(ParseError) << "trace JSON: unknown instruction kind '" << kname << "'";
    Instruction inst;
    inst.kind = kind;
    if (ji.contains("inputs")) {
      if (!ji["inputs"].is_array())
        LOOM_THROW(ParseError) << "trace JSON: \"inputs\" of " << kname << " must be an array";
      for (auto& v : ji["inputs"])
        inst.inputs.push_back(valueFromJson(v, rvs));
    }
    Value ignored;
    inst.inputs = bindArguments(*kind, inst.inputs, {}, ignored, nullptr, false);
    if (ji.contains("decision")) inst.decision = valueFromJson(ji["decision"], rvs);
    if (ji.contains("outputs")) {
      for (auto& o : ji["outputs"]) {
        if (!o.is_string() || o.get<std::string>().empty())
          LOOM_THROW(ParseError) << "trace JSON: output names must be strings";
        std::string n = o.get<std::string>();
        char p = n[0];
        Value::Kind k = p == 'b'   ? Value::Kind::Block
                        : p == 'l' ? Value::Kind::Loop
                                   : Value::Kind::ExprRV;
        Value v = k == Value::Kind::Block  ? Value(BlockRV{nextId})
                  : k == Value::Kind::Loop ? Value(LoopRV{nextId})
                                           : Value(ExprRV{nextId});
        ++nextId;
        rvs[n] = v;
        inst.outputs.push_back(v);
      }
    }
    t.insts.push_back(std::move(inst));
  }
  return t;
}

namespace {
/// Restores the schedule's source span however the replay ends.
struct SpanGuard {
  Schedule& sch;
  Span saved;
  ~SpanGuard() { sch.setSourceSpan(saved); }
};
} // namespace

void Trace::apply(Schedule& sch, const std::map<size_t, Value>& decisions) const {
  std::map<int, Value> m;
  SpanGuard guard{sch, sch.sourceSpan()};
  for (size_t i = 0; i < insts.size(); ++i) {
    const Instruction& inst = insts[i];
    std::vector<Value> in;
    for (auto& v : inst.inputs)
      in.push_back(mapRVs(v, m));
    auto d = decisions.find(i);
    Value decision = d != decisions.end() ? d->second : inst.decision;
    sch.setSourceSpan(inst.span);
    std::vector<Value> out = inst.kind->apply(sch, in, decision);
    if (out.size() != inst.outputs.size()) {
      throw ScheduleValueError("replaying " + inst.kind->name + " (instruction " +
                                   std::to_string(i) + ") gave " + std::to_string(out.size()) +
                                   " results where the trace has " +
                                   std::to_string(inst.outputs.size()),
                               sch.func());
    }
    for (size_t k = 0; k < out.size(); ++k)
      m[inst.outputs[k].rvId()] = out[k];
  }
}

namespace {
void collectRVs(const Value& v, std::set<int>& out) {
  if (v.isRV()) out.insert(v.rvId());
  if (v.kind() == Value::Kind::List)
    for (auto& e : v.asList())
      collectRVs(e, out);
}
} // namespace

Trace Trace::simplified() const {
  std::set<int> used;
  std::vector<bool> keep(insts.size(), true);
  for (size_t i = insts.size(); i-- > 0;) {
    const Instruction& inst = insts[i];
    bool anyUsed = inst.outputs.empty();
    for (auto& o : inst.outputs)
      anyUsed |= used.count(o.rvId()) != 0;
    if (inst.kind->pure && !inst.kind->sampling && !anyUsed) {
      keep[i] = false;
      continue;
    }
    for (auto& in : inst.inputs)
      collectRVs(in, used);
  }
  Trace t;
  for (size_t i = 0; i < insts.size(); ++i)
    if (keep[i]) t.insts.push_back(insts[i]);
  return t;
}

std::vector<size_t> Trace::samplingInstructions() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < insts.size(); ++i)
    if (insts[i].kind->sampling) out.push_back(i);
  return out;
}

} // namespace loom::tir
