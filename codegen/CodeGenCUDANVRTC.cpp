// CUDA C to PTX through NVRTC, loaded at run time (no link-time dependency on the CUDA toolkit).
#include "codegen/CodeGenCUDANVRTC.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "codegen/CodeGenLLVM.h"

namespace loom::codegen {

namespace {

using Program = void*;
using Result = int;  // nvrtcResult; 0 is NVRTC_SUCCESS

struct NVRTC {
  void* lib = nullptr;
  std::string why;
  const char* (*getErrorString)(Result) = nullptr;
  Result (*createProgram)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  Result (*compileProgram)(Program, int, const char* const*) = nullptr;
  Result (*getProgramLogSize)(Program, size_t*) = nullptr;
  Result (*getProgramLog)(Program, char*) = nullptr;
  Result (*getPTXSize)(Program, size_t*) = nullptr;
  Result (*getPTX)(Program, char*) = nullptr;
  Result (*destroyProgram)(Program*) = nullptr;
};

template <typename F>
bool load(NVRTC& n, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(n.lib, name));
  if (!fn) n.why = std::string("libnvrtc has no ") + name;
  return fn != nullptr;
}

NVRTC& nvrtc() {
  static NVRTC n;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("LOOM_NVRTC")) candidates.push_back(p);
    for (const char* c : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"})
      candidates.push_back(c);
    std::string tried;
    for (auto& c : candidates) {
      n.lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (n.lib) break;
      tried += (tried.empty() ? "" : ", ") + c;
    }
    if (!n.lib) {
      n.why = "NVRTC (the CUDA runtime compiler) is not installed: tried " + tried +
              " (install the CUDA toolkit, or set LOOM_NVRTC to libnvrtc.so)";
      return;
    }
    bool ok = load(n, n.getErrorString, "nvrtcGetErrorString") && load(n, n.createProgram, "nvrtcCreateProgram") &&
              load(n, n.compileProgram, "nvrtcCompileProgram") && load(n, n.getProgramLogSize, "nvrtcGetProgramLogSize") &&
              load(n, n.getProgramLog, "nvrtcGetProgramLog") && load(n, n.getPTXSize, "nvrtcGetPTXSize") &&
              load(n, n.getPTX, "nvrtcGetPTX") && load(n, n.destroyProgram, "nvrtcDestroyProgram");
    if (!ok) n.lib = nullptr;
  });
  return n;
}

}  // namespace

bool nvrtcAvailable(std::string* why) {
  NVRTC& n = nvrtc();
  if (!n.lib && why) *why = n.why;
  return n.lib != nullptr;
}

std::string compileCUDAToPTX(const std::string& source, const std::string& arch) {
  NVRTC& n = nvrtc();
  if (!n.lib) LOOM_THROW(CodeGenError) << "cannot compile CUDA to PTX: " << n.why;
  if (arch.rfind("sm_", 0) != 0) LOOM_THROW(CodeGenError) << "CUDA arch must look like sm_90, got '" << arch << "'";
  Program prog = nullptr;
  Result r = n.createProgram(&prog, source.c_str(), "loom_kernels.cu", 0, nullptr, nullptr);
  if (r != 0) LOOM_THROW(CodeGenError) << "nvrtcCreateProgram failed: " << n.getErrorString(r);
  std::string archOpt = "--gpu-architecture=compute_" + arch.substr(3);
  const char* opts[] = {archOpt.c_str(), "--std=c++17", "-default-device"};
  r = n.compileProgram(prog, 3, opts);
  size_t logSize = 0;
  n.getProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize) n.getProgramLog(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  if (r != 0) {
    n.destroyProgram(&prog);
    LOOM_THROW(CodeGenError) << "NVRTC could not compile the CUDA kernels for " << arch << " (" << n.getErrorString(r)
                             << "):\n"
                             << log;
  }
  size_t ptxSize = 0;
  n.getPTXSize(prog, &ptxSize);
  std::string ptx(ptxSize, '\0');
  n.getPTX(prog, ptx.data());
  n.destroyProgram(&prog);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

namespace {

/// The registers named in `text` ("%rd12", "%r3"; not the special registers %tid.x, %ctaid.x).
std::vector<std::string> registersIn(const std::string& text) {
  static const std::regex reg(R"(%[a-z]+[0-9]+\b)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), reg); it != std::sregex_iterator(); ++it)
    out.push_back(it->str());
  return out;
}

/// An instruction's operands, split at the top-level commas ("{%r1, %r2}" is one operand).
std::vector<std::string> operandsOf(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

struct PtxKernel {
  std::string name;
  std::map<std::string, int> params;  // parameter symbol -> its index
  std::map<std::string, std::set<int>> from;  // register -> the parameters its value may come from
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> flows;  // defined, used
  std::vector<std::vector<std::string>> stores;  // address registers of each store
  std::vector<std::pair<std::string, std::vector<std::string>>> ncLoads;  // instruction, address registers

  std::vector<std::string> hazards() {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& [defs, uses] : flows)
        for (auto& u : uses) {
          auto it = from.find(u);
          if (it == from.end()) continue;
          std::set<int> src = it->second;  // a copy: `from` may grow below
          for (auto& d : defs)
            for (int p : src) changed |= from[d].insert(p).second;
        }
    }
    std::set<int> written;
    for (auto& regs : stores)
      for (auto& r : regs)
        if (auto it = from.find(r); it != from.end()) written.insert(it->second.begin(), it->second.end());
    std::vector<std::string> out;
    for (auto& [text, regs] : ncLoads) {
      std::set<int> hit;
      for (auto& r : regs)
        if (auto it = from.find(r); it != from.end())
          for (int p : it->second)
            if (written.count(p)) hit.insert(p);
      if (hit.empty()) continue;
      std::ostringstream os;
      os << name << ": `" << text << "` may read parameter";
      for (int p : hit) os << " " << p;
      os << ", which the kernel stores to";
      out.push_back(os.str());
    }
    return out;
  }
};

}  // namespace

std::vector<std::string> nonCoherentLoadsOfWrittenParams(const std::string& ptx) {
  static const std::regex entry(R"(\.entry\s+([A-Za-z_$][\w$]*))");
  static const std::regex param(R"(\.param\s+[^,)]*?([A-Za-z_$][\w$]*)\s*(,|\)|$))");
  std::vector<std::string> out;
  std::optional<PtxKernel> k;
  bool inBody = false;
  std::istringstream in(ptx);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      k.emplace();
      k->name = m[1];
      inBody = false;
    }
    if (!k) continue;
    size_t first = line.find_first_not_of(" \t");
    std::string t = first == std::string::npos ? "" : line.substr(first);
    if (!inBody) {
      for (auto it = std::sregex_iterator(t.begin(), t.end(), param); it != std::sregex_iterator(); ++it) {
        int index = int(k->params.size());
        k->params.emplace((*it)[1], index);
      }
      if (t == "{") inBody = true;
      continue;
    }
    if (line.rfind("}", 0) == 0) {  // the kernel's closing brace (inner ones are indented)
      for (auto& h : k->hazards()) out.push_back(h);
      k.reset();
      continue;
    }
    if (t.empty() || t[0] == '.' || t[0] == '/' || t[0] == '{' || t[0] == '}' || t.back() == ':') continue;
    if (t[0] == '@') {  // a predicate guard
      size_t sp = t.find_first_of(" \t");
      if (sp == std::string::npos) continue;
      t = t.substr(t.find_first_not_of(" \t", sp));
    }
    size_t semi = t.find(';');
    std::string instr = t.substr(0, semi == std::string::npos ? t.size() : semi + 1);
    size_t sp = instr.find_first_of(" \t");
    std::string op = instr.substr(0, sp);
    std::string rest = sp == std::string::npos ? "" : instr.substr(sp, instr.size() - sp - (semi == std::string::npos ? 0 : 1));
    std::vector<std::string> ops = operandsOf(rest);
    auto starts = [&](const char* p) { return op.rfind(p, 0) == 0; };
    std::string shown;  // the instruction with its whitespace runs made one space
    for (char c : instr)
      if (!(c == ' ' || c == '\t') || (!shown.empty() && shown.back() != ' ')) shown += c == '\t' ? ' ' : c;
    if (starts("st.") || starts("red.")) {
      if (!ops.empty()) k->stores.push_back(registersIn(ops[0]));
    } else if (starts("atom.")) {
      if (ops.size() > 1) k->stores.push_back(registersIn(ops[1]));
    } else if (starts("ld.param")) {
      if (ops.size() > 1) {
        for (auto& [sym, index] : k->params)
          if (ops[1].find("[" + sym + "]") != std::string::npos || ops[1].find("[" + sym + "+") != std::string::npos)
            for (auto& d : registersIn(ops[0])) k->from[d].insert(index);
      }
    } else if (starts("ld.global.nc") || starts("ldu.global")) {
      if (ops.size() > 1) k->ncLoads.emplace_back(shown, registersIn(ops[1]));
    } else if (starts("ld.") || starts("ldu.") || starts("setp.") || starts("bra") || starts("ret") || starts("bar.")) {
      // loaded data, predicates and control: no address flows through them
    } else if (!ops.empty()) {
      std::vector<std::string> uses;
      for (size_t i = 1; i < ops.size(); ++i)
        for (auto& r : registersIn(ops[i])) uses.push_back(r);
      k->flows.emplace_back(registersIn(ops[0]), uses);
    }
  }
  return out;
}

}  // namespace loom::codegen
