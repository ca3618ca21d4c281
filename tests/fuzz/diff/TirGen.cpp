// Random valid tensor programs as TVMScript text, and random schedules of them.
#include "tests/fuzz/diff/TirGen.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "core/schedule/Analysis.h"
#include "core/schedule/Primitives.h"
#include "core/schedule/ScheduleError.h"

namespace loom::fuzz {

namespace {

using Rng = std::mt19937_64;

int64_t pick(Rng& rng, int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); }
bool chance(Rng& rng, int percent) { return int(rng() % 100) < percent; }

std::string tuple(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// A tensor the program reads: its name, shape and how to index it from the base iter vars.
struct Source {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<int> dims;  ///< per axis: the base axis it follows, or -1 for an axis of extent 1
  std::vector<int64_t> reduceExtents;  ///< reduction inputs: extra trailing axes
};

class Generator {
public:
  explicit Generator(Rng& rng) : m_rng(rng) {}

  std::string program() {
    const char* dtypes[] = {"float32", "float32", "float32", "float64", "int32", "int8"};
    m_dtype = dtypes[m_rng() % 6];
    m_float = m_dtype[0] == 'f';
    int rank = int(pick(m_rng, 1, 3));
    for (int d = 0; d < rank; ++d) m_shape.push_back(pick(m_rng, 1, d == rank - 1 ? 9 : 6));
    int stages = int(pick(m_rng, 1, 4));
    std::ostringstream body;
    for (int s = 0; s < stages; ++s) {
      bool last = s == stages - 1;
      std::string out = last ? "out" : "t" + std::to_string(s);
      if (chance(m_rng, 30))
        body << reductionStage(s, out);
      else
        body << elementwiseStage(s, out);
      if (!last) m_results.push_back(out);
    }
    std::ostringstream text;
    text << "# from tvm.script import tir as T\n\n@T.prim_func\ndef main(";
    for (auto& p : m_params) text << p.name << ": T.Buffer(" << tuple(p.shape) << ", \"" << m_dtype << "\"), ";
    text << "out: T.Buffer(" << tuple(m_shape) << ", \"" << m_dtype << "\")):\n";
    text << "    T.func_attr({\"global_symbol\": \"main\", \"tir.noalias\": T.bool(True)})\n";
    for (auto& r : m_results) text << "    " << r << " = T.alloc_buffer(" << tuple(m_shape) << ", \"" << m_dtype << "\")\n";
    text << body.str();
    return text.str();
  }

private:
  Rng& m_rng;
  std::string m_dtype;
  bool m_float = true;
  std::vector<int64_t> m_shape;
  std::vector<Source> m_params;
  std::vector<std::string> m_results;

  std::string ivar(int d) const { return "v" + std::to_string(d); }

  std::string baseIndex() const {
    std::string s;
    for (size_t d = 0; d < m_shape.size(); ++d) s += (d ? ", " : "") + ivar(int(d));
    return s;
  }

  std::string literal(double v) const {
    if (m_dtype == "int32") return std::to_string(int64_t(v));
    if (m_dtype == "int8") return "T.int8(" + std::to_string(int64_t(v)) + ")";
    std::ostringstream o;
    o << "T." << m_dtype << "(" << v << ")";
    return o.str();
  }

  /// A new input broadcast to the base shape (some axes dropped or of extent 1).
  const Source& newInput() {
    Source p;
    p.name = std::string(1, char('A' + m_params.size()));
    for (size_t d = 0; d < m_shape.size(); ++d) {
      int r = int(m_rng() % 6);
      if (r == 0 && m_shape.size() > 1) continue;  // dropped axis
      if (r == 1) {
        p.shape.push_back(1);
        p.dims.push_back(-1);
      } else {
        p.shape.push_back(m_shape[d]);
        p.dims.push_back(int(d));
      }
    }
    if (p.shape.empty()) {
      p.shape.push_back(m_shape.back());
      p.dims.push_back(int(m_shape.size()) - 1);
    }
    m_params.push_back(p);
    return m_params.back();
  }

  std::string load(const Source& p) const {
    std::string s = p.name + "[";
    for (size_t a = 0; a < p.dims.size(); ++a) s += (a ? ", " : "") + (p.dims[a] < 0 ? std::string("0") : ivar(p.dims[a]));
    return s + "]";
  }

  std::string leaf() {
    int r = int(m_rng() % 10);
    if (r < 3 && !m_results.empty()) return m_results[m_rng() % m_results.size()] + "[" + baseIndex() + "]";
    if (r < 7) {
      std::vector<const Source*> inputs;
      for (auto& p : m_params)
        if (p.reduceExtents.empty()) inputs.push_back(&p);
      if (!inputs.empty() && (chance(m_rng, 60) || m_params.size() >= 4)) return load(*inputs[m_rng() % inputs.size()]);
      if (m_params.size() < 4) return load(newInput());
    }
    if (r < 9) return literal(m_float ? double(pick(m_rng, -8, 8)) / 4 : double(pick(m_rng, -5, 5)));
    std::string v = ivar(int(m_rng() % m_shape.size()));
    return m_dtype == "int32" ? v : "T.Cast(\"" + m_dtype + "\", " + v + ")";
  }

  std::string condition(int depth) {
    if (chance(m_rng, 50)) {
      int d = int(m_rng() % m_shape.size());
      const char* ops[] = {"<", ">=", "=="};
      return ivar(d) + " " + ops[m_rng() % 3] + " " + std::to_string(pick(m_rng, 0, m_shape[d]));
    }
    const char* ops[] = {"<", ">", "<=", "!="};
    return expr(depth + 1) + " " + ops[m_rng() % 4] + " " + expr(depth + 1);
  }

  std::string expr(int depth) {
    if (depth >= 3 || chance(m_rng, 25)) return leaf();
    switch (m_rng() % 10) {
    case 0: return "(" + expr(depth + 1) + " + " + expr(depth + 1) + ")";
    case 1: return "(" + expr(depth + 1) + " - " + expr(depth + 1) + ")";
    case 2: return "(" + expr(depth + 1) + " * " + expr(depth + 1) + ")";
    case 3: return "T.max(" + expr(depth + 1) + ", " + expr(depth + 1) + ")";
    case 4: return "T.min(" + expr(depth + 1) + ", " + expr(depth + 1) + ")";
    case 5:
      if (m_float) return "T.exp(" + leaf() + ")";
      return "(" + expr(depth + 1) + " // " + literal(double(pick(m_rng, 2, 5))) + ")";
    case 6:
      if (m_float) return "(" + expr(depth + 1) + " / " + literal(double(pick(m_rng, 1, 4)) * 0.5) + ")";
      return "(" + expr(depth + 1) + " % " + literal(double(pick(m_rng, 2, 5))) + ")";
    case 7: return "T.if_then_else(" + condition(depth) + ", " + expr(depth + 1) + ", " + expr(depth + 1) + ")";
    case 8: return "T.Select(" + condition(depth) + ", " + expr(depth + 1) + ", " + expr(depth + 1) + ")";
    default: return leaf();
    }
  }

  /// The loop nest and block header of a stage over the base shape plus `reduce` extra axes.
  std::string header(int s, const std::vector<int64_t>& reduce, std::ostringstream& o) {
    std::vector<std::string> loops;
    std::vector<int64_t> extents = m_shape;
    extents.insert(extents.end(), reduce.begin(), reduce.end());
    std::string names, ext, vars, kinds;
    for (size_t a = 0; a < extents.size(); ++a) {
      bool red = a >= m_shape.size();
      std::string l = (red ? "k" : "i") + std::to_string(s) + "_" + std::to_string(a);
      names += (a ? ", " : "") + l;
      ext += (a ? ", " : "") + std::to_string(extents[a]);
      vars += (a ? ", " : "") + (red ? "w" + std::to_string(a - m_shape.size()) : ivar(int(a)));
      kinds += red ? "R" : "S";
    }
    o << "    for " << names << " in T.grid(" << ext << "):\n";
    o << "        with T.block(\"s" << s << "\"):\n";
    o << "            " << vars << " = T.axis.remap(\"" << kinds << "\", [" << names
      << "])\n";
    return "            ";
  }

  std::string elementwiseStage(int s, const std::string& out) {
    std::ostringstream o;
    std::string ind = header(s, {}, o);
    std::string dst = out + "[" + baseIndex() + "]";
    if (chance(m_rng, 15)) {
      o << ind << "if " << condition(1) << ":\n";
      o << ind << "    " << dst << " = " << expr(0) << "\n";
      o << ind << "else:\n";
      o << ind << "    " << dst << " = " << expr(0) << "\n";
    } else {
      o << ind << dst << " = " << expr(0) << "\n";
    }
    return o.str();
  }

  std::string reductionStage(int s, const std::string& out) {
    std::vector<int64_t> reduce;
    int n = chance(m_rng, 25) ? 2 : 1;
    for (int k = 0; k < n; ++k) reduce.push_back(pick(m_rng, 1, 9));
    Source r;
    r.name = "R" + std::to_string(s);
    r.shape = m_shape;
    for (size_t d = 0; d < m_shape.size(); ++d) r.dims.push_back(int(d));
    r.shape.insert(r.shape.end(), reduce.begin(), reduce.end());
    r.reduceExtents = reduce;
    m_params.push_back(r);
    std::string rload = r.name + "[" + baseIndex();
    for (int k = 0; k < n; ++k) rload += ", w" + std::to_string(k);
    rload += "]";
    std::ostringstream o;
    std::string ind = header(s, reduce, o);
    std::string dst = out + "[" + baseIndex() + "]";
    std::string term = chance(m_rng, 50) ? rload : "(" + rload + " * " + expr(1) + ")";
    int kind = m_float ? int(m_rng() % 3) : 0;
    const char* identity[] = {"0", "-inf", "inf"};
    std::string id = m_float ? "T." + m_dtype + "(" + (kind ? "\"" + std::string(identity[kind]) + "\"" : "0") + ")" : literal(0);
    o << ind << "with T.init():\n" << ind << "    " << dst << " = " << id << "\n";
    if (kind == 0) o << ind << dst << " = " << dst << " + " << term << "\n";
    if (kind == 1) o << ind << dst << " = T.max(" << dst << ", " << term << ")\n";
    if (kind == 2) o << ind << dst << " = T.min(" << dst << ", " << term << ")\n";
    return o.str();
  }
};

} // namespace

std::string randomTirProgram(std::mt19937_64& rng) { return Generator(rng).program(); }

std::string randomReuseProgram(std::mt19937_64& rng) {
  const char* dtypes[] = {"float32", "float32", "float64", "int32", "int8"};
  std::string dt = dtypes[rng() % 5];
  int kind = int(rng() % 3);
  int64_t m = pick(rng, 1, 24), n = pick(rng, 1, 24), k = pick(rng, 1, 32);
  bool epilogue = chance(rng, 40);
  std::string c = epilogue ? "C" : "out";
  std::vector<int64_t> cShape = kind == 1 ? std::vector<int64_t>{m} : std::vector<int64_t>{m, n};
  std::vector<std::pair<std::string, std::vector<int64_t>>> params;
  std::string loops, axes, iters, init, update, idx;
  switch (kind) {
  case 0:
    params = {{"A", {m, k}}, {"B", {k, n}}};
    loops = "i, j, k in T.grid(" + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + ")";
    axes = "vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])";
    idx = "vi, vj";
    update = "A[vi, vk] * B[vk, vj]";
    break;
  case 1:
    params = {{"A", {m, k}}, {"B", {k}}};
    loops = "i, k in T.grid(" + std::to_string(m) + ", " + std::to_string(k) + ")";
    axes = "vi, vk = T.axis.remap(\"SR\", [i, k])";
    idx = "vi";
    update = "A[vi, vk] * B[vk]";
    break;
  default:
    params = {{"A", {m, n + k - 1}}, {"W", {k}}};
    loops = "i, j, k in T.grid(" + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + ")";
    axes = "vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])";
    idx = "vi, vj";
    update = "A[vi, vj + vk] * W[vk]";
    break;
  }
  if (epilogue) params.push_back({"bias", {cShape.back()}});
  std::ostringstream t;
  t << "# from tvm.script import tir as T\n\n@T.prim_func\ndef main(";
  for (auto& [name, shape] : params) t << name << ": T.Buffer(" << tuple(shape) << ", \"" << dt << "\"), ";
  t << "out: T.Buffer(" << tuple(cShape) << ", \"" << dt << "\")):\n";
  t << "    T.func_attr({\"global_symbol\": \"main\", \"tir.noalias\": T.bool(True)})\n";
  if (epilogue) t << "    C = T.alloc_buffer(" << tuple(cShape) << ", \"" << dt << "\")\n";
  std::string zero = "T." + dt + "(0)";
  t << "    for " << loops << ":\n        with T.block(\"r\"):\n            " << axes << "\n";
  t << "            with T.init():\n                " << c << "[" << idx << "] = " << zero << "\n";
  t << "            " << c << "[" << idx << "] = " << c << "[" << idx << "] + " << update << "\n";
  if (epilogue) {
    std::string last = kind == 1 ? "vi" : "vj";
    if (kind == 1)
      t << "    for i in T.grid(" << m << "):\n        with T.block(\"e\"):\n            vi = T.axis.remap(\"S\", [i])\n";
    else
      t << "    for i, j in T.grid(" << m << ", " << n << "):\n        with T.block(\"e\"):\n"
        << "            vi, vj = T.axis.remap(\"SS\", [i, j])\n";
    t << "            out[" << idx << "] = T.max(C[" << idx << "] + bias[" << last << "], " << zero << ")\n";
  }
  return t.str();
}

int randomSchedule(tir::Schedule& sch, std::mt19937_64& rng, int steps) {
  using namespace tir;
  int applied = 0;
  for (int s = 0; s < steps; ++s) {
    std::vector<std::string> names;
    for (auto* b : allBlocks(sch.func()))
      if (b->name != "root") names.push_back(b->name);
    if (names.empty()) break;
    try {
      BlockRV b = getBlock(sch, names[rng() % names.size()]);
      auto loops = getLoops(sch, b);
      LoopRV l = loops.empty() ? LoopRV() : loops[rng() % loops.size()];
      int kind = int(rng() % 14);
      if (loops.empty() && kind < 7) continue;
      switch (kind) {
      case 0:
      case 1: {
        int64_t ext = constIntValue(sch.get(l)->extent).value_or(4);
        int64_t f = 1 + int64_t(rng() % uint64_t(std::max<int64_t>(1, ext + 1)));
        if (rng() % 2)
          split(sch, l, {nullptr, f});
        else
          split(sch, l, {f, nullptr});
        break;
      }
      case 2: {
        size_t a = rng() % loops.size();
        if (a + 1 < loops.size()) fuse(sch, {loops[a], loops[a + 1]});
        break;
      }
      case 3: {
        std::vector<LoopRV> perm = loops;
        std::shuffle(perm.begin(), perm.end(), rng);
        perm.resize(1 + rng() % perm.size());
        reorder(sch, perm);
        break;
      }
      case 4: parallel(sch, l); break;
      case 5: vectorize(sch, l); break;
      case 6: unroll(sch, l); break;
      case 7: computeInline(sch, b); break;
      case 8: reverseComputeInline(sch, b); break;
      case 9:
      case 10: {
        // Under a loop of another block.
        BlockRV other = getBlock(sch, names[rng() % names.size()]);
        auto ol = getLoops(sch, other);
        if (ol.empty()) break;
        if (kind == 9)
          computeAt(sch, b, ol[rng() % ol.size()], rng() % 2);
        else
          reverseComputeAt(sch, b, ol[rng() % ol.size()], rng() % 2);
        break;
      }
      case 11:
        if (rng() % 2)
          cacheRead(sch, b, int64_t(rng() % 2), "global");
        else
          cacheWrite(sch, b, 0, "local");
        break;
      case 12:
        if (!loops.empty()) rfactor(sch, l, 0);
        break;
      default:
        if (!loops.empty()) decomposeReduction(sch, b, l);
        break;
      }
      ++applied;
    } catch (const ScheduleError&) {
    }
  }
  return applied;
}

} // namespace loom::fuzz
