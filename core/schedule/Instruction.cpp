// The instruction-kind registry and argument binding (positional/keyword, defaults, type checks).
#include "core/schedule/Instruction.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/schedule/Primitives.h"
#include "core/support/Error.h"

namespace loom::tir {

namespace vt {
std::string describe(unsigned mask, unsigned elemMask) {
  std::vector<std::string> names;
  bool floatSeen = (mask & bit(Value::Kind::Float)) != 0;
  for (unsigned k = 0; k <= unsigned(Value::Kind::Lambda); ++k) {
    if (!(mask & (1u << k))) continue;
    if (floatSeen && Value::Kind(k) == Value::Kind::Int) continue; // "float" accepts ints
    std::string n = Value::kindName(Value::Kind(k));
    if (Value::Kind(k) == Value::Kind::List && elemMask) {
      std::string e = describe(elemMask);
      n = "list of " + (e.find(" or ") != std::string::npos ? "(" + e + ")" : e);
    }
    names.push_back(n);
  }
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? " or " : "") + names[i];
  return s;
}
} // namespace vt

namespace {
std::map<std::string, InstructionKind>& registry() {
  static std::map<std::string, InstructionKind> r;
  return r;
}
// Schedules are built on tuner worker threads too: the first lookup registers exactly once.
void ensureRegistered() {
  static std::once_flag once;
  std::call_once(once, [] { registerBuiltinInstructionKinds(); });
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool accepts(unsigned mask, unsigned elemMask, const Value& v) {
  if (!(mask & vt::bit(v.kind()))) return false;
  if (v.kind() == Value::Kind::List && elemMask)
    for (auto& e : v.asList())
      if (!accepts(elemMask, 0, e)) return false;
  return true;
}
} // namespace

void registerInstructionKind(InstructionKind kind) {
  std::string name = kind.name;
  registry()[name] = std::move(kind);
}

const InstructionKind* findInstructionKind(const std::string& name) {
  ensureRegistered();
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> instructionKindNames() {
  ensureRegistered();
  std::vector<std::string> names;
  for (auto& [n, k] : registry())
    names.push_back(n);
  return names;
}

std::vector<std::string> closeInstructionKindNames(const std::string& name) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (auto& n : instructionKindNames()) {
    size_t d = editDistance(name, n);
    bool related = n.find(name) != std::string::npos ||
                   (name.size() >= 3 && name.find(n) != std::string::npos);
    if (d <= std::max<size_t>(2, name.size() / 3) || related)
      scored.push_back({related ? 0 : d, n});
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (auto& [d, n] : scored)
    if (out.size() < 4) out.push_back(n);
  return out;
}

std::vector<Value> bindArguments(const InstructionKind& kind, const std::vector<Value>& args,
                                 const std::vector<std::pair<std::string, Value>>& kwargs,
                                 Value& decision, int* argIndex, bool spread) {
  auto fail = [&](int idx) -> detail::Thrower<TypeError> {
    if (argIndex) *argIndex = idx;
    return detail::Thrower<TypeError>();
  };
  const auto& ps = kind.params;
  std::vector<std::optional<Value>> slots(ps.size());
  size_t positional = args.size();
  for (size_t i = 0; i < ps.size() && i < args.size(); ++i)
    if (ps[i].variadic && spread) {
      // The variadic parameter gathers the rest of the positional arguments.
      slots[i] = Value(std::vector<Value>(args.begin() + long(i), args.end()));
      positional = i;
      for (size_t j = 0; j < i; ++j)
        slots[j] = args[j];
      break;
    }
  if (positional == args.size() && args.size() > ps.size())
    fail(int(ps.size())) << kind.name << "() takes " << ps.size() << " argument"
                         << (ps.size() == 1 ? "" : "s") << " but " << args.size() << " were given";
  if (positional == args.size())
    for (size_t i = 0; i < args.size(); ++i)
      slots[i] = args[i];
  for (size_t k = 0; k < kwargs.size(); ++k) {
    auto& [name, v] = kwargs[k];
    int idx = int(args.size() + k);
    if (kind.sampling && name == "decision") {
      decision = v;
      continue;
    }
    auto it =
        std::find_if(ps.begin(), ps.end(), [&](const ParamSpec& p) { return p.name == name; });
    if (it == ps.end()) {
      std::string known;
      for (auto& p : ps)
        known += (known.empty() ? "" : ", ") + p.name;
      fail(idx) << kind.name << "() got an unexpected keyword argument '" << name
                << "' (parameters: " << known << ")";
    }
    size_t pi = size_t(it - ps.begin());
    if (slots[pi]) fail(idx) << kind.name << "() got multiple values for argument '" << name << "'";
    slots[pi] = v;
  }
  std::vector<Value> out;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!slots[i]) {
      if (!ps[i].defaultValue)
        fail(-1) << kind.name << "() missing required argument '" << ps[i].name << "'";
      out.push_back(*ps[i].defaultValue);
      continue;
    }
    if (!accepts(ps[i].types, ps[i].elemTypes, *slots[i])) {
      int idx = int(i);
      if (i >= args.size())
        for (size_t k = 0; k < kwargs.size(); ++k)
          if (kwargs[k].first == ps[i].name) idx = int(args.size() + k);
      fail(idx) << "argument '" << ps[i].name << "' of " << kind.name << "() must be "
                << vt::describe(ps[i].types, ps[i].elemTypes) << ", got " << slots[i]->typeName();
    }
    out.push_back(*slots[i]);
  }
  return out;
}

} // namespace loom::tir
