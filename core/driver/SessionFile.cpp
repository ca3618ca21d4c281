// The Studio's session file read without Qt: every key checked for its kind, errors naming it.
#include "core/driver/SessionFile.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/driver/InputShapes.h"

namespace loom::driver {

namespace {

using json = nlohmann::json;

const char* kindOf(const json& v) {
  switch (v.type()) {
  case json::value_t::null: return "null";
  case json::value_t::object: return "an object";
  case json::value_t::array: return "an array";
  case json::value_t::string: return "a string";
  case json::value_t::boolean: return "a bool";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
  case json::value_t::number_float: return "a number";
  default: return "binary data";
  }
}

/// Reads the keys of one object; `path` is the object's key path ("workspace.runs[2]").
class Obj {
public:
  Obj(const json& o, std::string file, std::string path) : m_o(o), m_file(std::move(file)), m_path(std::move(path)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    LOOM_THROW(driver::SessionFileError) << m_file << ": " << at(key) << ": " << what;
  }
  std::string at(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }
  const json* get(const std::string& key) const {
    auto it = m_o.find(key);
    return it == m_o.end() ? nullptr : &*it;
  }
  std::string str(const std::string& key, const std::string& def = {}) const {
    const json* v = get(key);
    if (!v) return def;
    if (!v->is_string()) fail(key, std::string("expected a string, got ") + kindOf(*v));
    return v->get<std::string>();
  }
  bool boolean(const std::string& key, bool def) const {
    const json* v = get(key);
    if (!v) return def;
    if (!v->is_boolean()) fail(key, std::string("expected a bool, got ") + kindOf(*v));
    return v->get<bool>();
  }
  /// A number; null (how Qt writes NaN and infinity) reads as 0.
  double number(const std::string& key, double def = 0) const {
    const json* v = get(key);
    if (!v) return def;
    if (v->is_null()) return 0;
    if (!v->is_number()) fail(key, std::string("expected a number, got ") + kindOf(*v));
    return v->get<double>();
  }
  /// A whole number in [lo, hi].
  int64_t integer(const std::string& key, int64_t def, int64_t lo, int64_t hi) const {
    const json* v = get(key);
    if (!v) return def;
    return wholeNumber(*v, at(key), lo, hi);
  }
  int64_t wholeNumber(const json& v, const std::string& where, int64_t lo, int64_t hi) const {
    if (!v.is_number()) LOOM_THROW(driver::SessionFileError) << m_file << ": " << where << ": expected a whole number, got " << kindOf(v);
    double d = v.get<double>();
    if (v.is_number_integer() && !v.is_number_unsigned()) d = double(v.get<int64_t>());
    if (!std::isfinite(d) || d != std::floor(d) || d < double(lo) || d > double(hi))
      LOOM_THROW(driver::SessionFileError) << m_file << ": " << where << ": expected a whole number in [" << lo << ", " << hi
                                   << "], got " << v.dump();
    return v.is_number_integer() && !v.is_number_unsigned() ? v.get<int64_t>() : int64_t(d);
  }
  /// An object (absent: none).
  const json* object(const std::string& key) const {
    const json* v = get(key);
    if (v && !v->is_object()) fail(key, std::string("expected an object, got ") + kindOf(*v));
    return v;
  }
  const json* array(const std::string& key) const {
    const json* v = get(key);
    if (v && !v->is_array()) fail(key, std::string("expected an array, got ") + kindOf(*v));
    return v;
  }
  const std::string& file() const { return m_file; }

private:
  const json& m_o;
  std::string m_file, m_path;
};

constexpr int64_t kIntMax = std::numeric_limits<int>::max();
/// Preset parameters and dims are written as doubles by Qt: whole numbers up to 2^53 are exact.
constexpr int64_t kExact = int64_t(1) << 53;

SessionRun readRun(const Obj& r) {
  SessionRun x;
  x.id = int(r.integer("id", 0, 0, kIntMax - 1));  // the next run is id + 1
  x.version = int(r.integer("version", 0, 0, kIntMax));
  x.preset = r.str("preset");
  x.target = r.str("target");
  x.schedule = r.str("schedule");
  x.lowered = r.str("lowered");
  x.ok = r.boolean("ok", false);
  x.error = r.str("error");
  x.correct = r.boolean("correct", false);
  x.maxRelError = r.number("maxRelError");
  x.reference = r.str("reference");
  x.medianMs = r.number("medianMs");
  x.minMs = r.number("minMs");
  x.maxMs = r.number("maxMs");
  x.repeats = int(r.integer("repeats", 0, 0, kIntMax));
  x.callsPerRepeat = int(r.integer("callsPerRepeat", 0, 0, kIntMax));
  x.gflops = r.number("gflops");
  x.peak = r.number("peak");
  x.flopsKnown = r.boolean("flopsKnown", true);
  x.defaultMs = r.number("defaultMs");
  x.device = r.str("device");
  x.model = r.str("model");
  x.assembly = r.str("assembly");
  return x;
}

SessionWorkspace readWorkspace(const json& o, const std::string& file, const std::string& path) {
  Obj w(o, file, path);
  SessionWorkspace ws;
  ws.preset = w.str("preset", "matmul");
  if (const json* p = w.object("params")) {
    Obj params(*p, file, w.at("params"));
    for (auto it = p->begin(); it != p->end(); ++it)
      ws.params[it.key()] = params.integer(it.key(), 0, -kExact, kExact);
  }
  ws.schedule = w.str("schedule");
  ws.target = w.str("target", "llvm");
  if (const json* g = w.object("group")) {
    Obj go(*g, file, w.at("group"));
    SessionGroup group;
    group.name = go.str("name");
    group.tir = go.str("tir");
    group.numInputs = int(go.integer("numInputs", 0, 0, kIntMax));
    group.flops = go.number("flops");
    if (group.name.empty()) go.fail("name", "a fused group needs a name");
    ws.group = group;
  }
  ws.model = w.str("model");
  ws.modelLayout = w.str("modelLayout", "NCHWc");
  if (ws.modelLayout != "NCHW" && ws.modelLayout != "NCHWc")
    w.fail("modelLayout", "expected \"NCHW\" or \"NCHWc\", got \"" + ws.modelLayout + "\"");
  if (const json* s = w.object("inputShapes")) {
    Obj shapes(*s, file, w.at("inputShapes"));
    for (auto it = s->begin(); it != s->end(); ++it) {
      const json* dims = shapes.array(it.key());
      std::vector<int64_t>& out = ws.inputShapes[it.key()];
      for (size_t i = 0; i < dims->size(); ++i)
        out.push_back(shapes.wholeNumber((*dims)[i], shapes.at(it.key()) + "[" + std::to_string(i) + "]", 0, kExact));
    }
  }
  ws.symbolicInputShapes = w.str("symbolicInputShapes");
  if (!ws.symbolicInputShapes.empty()) {
    try {
      (void)parseInputShapes(ws.symbolicInputShapes);
    } catch (const Error& e) {
      w.fail("symbolicInputShapes", e.what());
    }
  }
  if (const json* runs = w.array("runs")) {
    for (size_t i = 0; i < runs->size(); ++i) {
      std::string where = w.at("runs") + "[" + std::to_string(i) + "]";
      const json& r = (*runs)[i];
      if (!r.is_object()) LOOM_THROW(driver::SessionFileError) << file << ": " << where << ": expected an object, got " << kindOf(r);
      ws.runs.push_back(readRun(Obj(r, file, where)));
    }
  }
  return ws;
}

json parseJson(const std::string& bytes, const std::string& file) {
  try {
    return json::parse(bytes);
  } catch (const json::exception& e) {
    LOOM_THROW(driver::SessionFileError) << file << ": not a Loom session file: not JSON (" << e.what() << ")";
  }
}

} // namespace

SessionWorkspace parseSessionWorkspace(const std::string& text, const std::string& where) {
  json o = parseJson(text, where);
  if (!o.is_object()) LOOM_THROW(driver::SessionFileError) << where << ": expected an object, got " << kindOf(o);
  return readWorkspace(o, where, "");
}

SessionFile parseSessionFile(const std::string& bytes, const std::string& file) {
  json o = parseJson(bytes, file);
  if (!o.is_object() || !o.contains("loomSession"))
    LOOM_THROW(driver::SessionFileError) << file << ": not a Loom session file (a JSON object with the key 'loomSession')";
  Obj top(o, file, "");
  SessionFile s;
  if (const json* ws = top.object("workspace")) s.workspace = readWorkspace(*ws, file, "workspace");
  s.layout = top.str("layout");
  if (const json* f = top.object("tuningForm")) s.tuningForm = f->dump();
  if (const json* r = top.object("tuningResults")) s.tuningResults = r->dump();
  if (const json* p = top.array("profiles")) s.profiles = p->dump();
  if (top.get("dark")) s.dark = top.boolean("dark", false);
  s.autosaveOf = top.str("autosaveOf");
  s.editorText = top.str("editorText");
  s.autosavedAt = top.str("autosavedAt");
  return s;
}

}  // namespace loom::driver
