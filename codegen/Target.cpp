// Parsing and querying of code generation targets through LLVM's target registry.
#include "codegen/Target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <cctype>
#include <memory>
#include <mutex>
#include <sstream>

#include "codegen/LLVMSupport.h"

namespace loom::codegen {

namespace {

std::vector<std::string> splitWords(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  std::string w;
  while (is >> w) out.push_back(w);
  return out;
}

std::vector<std::string> splitComma(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> hostFeatures() {
  std::vector<std::string> out;
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  for (auto& kv : features) out.push_back((kv.second ? "+" : "-") + kv.first().str());
  std::sort(out.begin(), out.end());
  return out;
}

/// A subtarget description of `t`'s CPU and features, or of the generic CPU (for checking names
/// without LLVM printing warnings about unknown ones).
std::unique_ptr<llvm::MCSubtargetInfo> subtargetInfo(const Target& t, bool generic = false) {
  std::string err;
  const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!lt) return nullptr;
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      generic ? lt->createMCSubtargetInfo(t.triple, "", "")
              : lt->createMCSubtargetInfo(t.triple, t.cpu, t.featureString()));
}

/// "cuda [-arch=sm_XX]" or "opencl".
Target parseGPU(const std::vector<std::string>& words, const std::string& text) {
  Target t;
  t.kind = words[0];
  if (t.kind == "cuda") t.arch = "sm_90";
  for (size_t i = 1; i < words.size(); ++i) {
    std::string w = words[i];
    if (w.rfind("--", 0) == 0) w = w.substr(1);
    std::string key = w, value;
    if (auto eq = w.find('='); eq != std::string::npos) {
      key = w.substr(0, eq);
      value = w.substr(eq + 1);
    } else if (i + 1 < words.size() && words[i + 1][0] != '-') {
      value = words[++i];
    }
    if (t.kind == "cuda" && key == "-arch") {
      bool ok = value.size() > 3 && value.rfind("sm_", 0) == 0;
      for (size_t k = 3; ok && k < value.size(); ++k) ok = std::isdigit(static_cast<unsigned char>(value[k])) || (k + 1 == value.size() && value[k] == 'a');
      if (!ok) LOOM_THROW(TargetError) << "target option -arch needs a value like sm_80 or sm_90, got '" << value << "' in \"" << text << "\"";
      t.arch = value;
    } else {
      LOOM_THROW(TargetError) << "unknown target option '" << words[i] << "' in \"" << text << "\" (known: "
                              << (t.kind == "cuda" ? "-arch=sm_XX" : "none") << ")";
    }
  }
  return t;
}

}  // namespace

Target Target::host() {
  initializeLLVM();
  Target t;
  t.triple = llvm::sys::getDefaultTargetTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  t.attrs = hostFeatures();
  return t;
}

Target Target::parse(const std::string& text) {
  initializeLLVM();
  std::vector<std::string> words = splitWords(text);
  if (words.empty()) LOOM_THROW(TargetError) << "empty target string (expected \"llvm ...\")";
  if (words[0] == "cuda" || words[0] == "opencl") return parseGPU(words, text);
  if (words[0] != "llvm")
    LOOM_THROW(TargetError) << "unknown target kind '" << words[0] << "' in \"" << text
                            << "\" (supported: llvm, cuda, opencl)";
  Target t;
  bool haveTriple = false, haveCpu = false, haveAttrs = false;
  for (size_t i = 1; i < words.size(); ++i) {
    std::string w = words[i];
    if (w.rfind("--", 0) == 0) w = w.substr(1);
    if (w.empty() || w[0] != '-')
      LOOM_THROW(TargetError) << "unexpected word '" << words[i] << "' in target \"" << text
                              << "\" (options start with '-')";
    std::string key = w.substr(1), value;
    bool hasValue = false;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      hasValue = true;
    }
    auto needValue = [&]() {
      if (!hasValue) {
        if (i + 1 >= words.size() || words[i + 1][0] == '-')
          LOOM_THROW(TargetError) << "target option -" << key << " needs a value";
        value = words[++i];
      }
    };
    if (key == "mtriple") {
      needValue();
      t.triple = llvm::Triple::normalize(value);
      haveTriple = true;
    } else if (key == "mcpu") {
      needValue();
      t.cpu = value;
      haveCpu = true;
    } else if (key == "mattr") {
      needValue();
      for (auto& a : splitComma(value)) {
        if (a[0] != '+' && a[0] != '-')
          LOOM_THROW(TargetError) << "target feature '" << a << "' must start with '+' or '-'";
        t.attrs.push_back(a);
      }
      haveAttrs = true;
    } else if (key == "opt-level" || key == "O") {
      needValue();
      if (value.size() != 1 || value[0] < '0' || value[0] > '3')
        LOOM_THROW(TargetError) << "target option -opt-level must be 0, 1, 2 or 3, got '" << value << "'";
      t.optLevel = value[0] - '0';
    } else if (key == "fast-math") {
      if (hasValue && value != "1" && value != "true" && value != "0" && value != "false")
        LOOM_THROW(TargetError) << "target option -fast-math takes no value (or true/false), got '"
                                << value << "'";
      t.fastMath = !hasValue || value == "1" || value == "true";
    } else {
      LOOM_THROW(TargetError) << "unknown target option '-" << key << "' in \"" << text
                              << "\" (known: -mtriple, -mcpu, -mattr, -opt-level, -fast-math)";
    }
  }
  std::string hostTriple = llvm::sys::getDefaultTargetTriple();
  if (!haveTriple) t.triple = hostTriple;
  std::string err;
  const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!lt) LOOM_THROW(TargetError) << "unknown target triple '" << t.triple << "': " << err;
  bool sameArch = llvm::Triple(t.triple).getArch() == llvm::Triple(hostTriple).getArch();
  if (!haveCpu) t.cpu = sameArch ? llvm::sys::getHostCPUName().str() : "generic";
  // The host CPU gets the host's exact features unless the user lists their own.
  if (!haveCpu && !haveAttrs && sameArch) t.attrs = hostFeatures();
  auto sti = subtargetInfo(t, true);
  LOOM_ICHECK(sti) << "no subtarget info for " << t.triple;
  if (t.cpu != "generic" && !sti->isCPUStringValid(t.cpu))
    LOOM_THROW(TargetError) << "unknown CPU '" << t.cpu << "' for target triple '" << t.triple << "'";
  if (haveAttrs) {
    llvm::StringMap<bool> known;
    for (auto& kv : sti->getAllProcessorFeatures()) known[kv.Key] = true;
    for (auto& a : t.attrs)
      if (!known.count(a.substr(1)))
        LOOM_THROW(TargetError) << "unknown target feature '" << a.substr(1) << "' for '" << t.triple
                                << "'";
  }
  return t;
}

bool Target::isHost() const {
  if (isGPU()) return false;
  llvm::Triple a(triple), h(llvm::sys::getDefaultTargetTriple());
  return a.getArch() == h.getArch() && a.getOS() == h.getOS();
}

std::string Target::featureString() const {
  std::string s;
  for (auto& a : attrs) {
    if (!s.empty()) s += ',';
    s += a;
  }
  return s;
}

int Target::nativeVectorBits() const {
  if (isGPU()) return 32;
  auto sti = subtargetInfo(*this);
  if (!sti) return 128;
  llvm::Triple tr(triple);
  if (tr.isX86()) {
    if (sti->checkFeatures("+avx512f")) return 512;
    if (sti->checkFeatures("+avx")) return 256;
    return 128;
  }
  return 128;
}

std::string Target::str() const {
  if (isGPU()) return arch.empty() ? kind : kind + " -arch=" + arch;
  std::string s = kind + " -mtriple=" + triple + " -mcpu=" + cpu;
  if (!attrs.empty()) s += " -mattr=" + featureString();
  if (optLevel != 3) s += " -opt-level=" + std::to_string(optLevel);
  if (fastMath) s += " -fast-math";
  return s;
}

}  // namespace loom::codegen
