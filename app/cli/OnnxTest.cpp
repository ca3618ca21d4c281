// `loom onnx-test`: runs ONNX backend test directories (model.onnx + test_data_set_*/) through
// the compiler and the graph executor, each in a child process, and counts passes.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <onnx/onnx_pb.h>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommon.h"
#include "core/driver/CompileModel.h"
#include "core/driver/CompileModelGPU.h"
#include "core/driver/InputShapes.h"
#include "core/driver/LoadModel.h"
#include "core/driver/SymbolBounds.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/support/Error.h"
#include "runtime/DeviceAPI.h"

namespace fs = std::filesystem;

namespace loom::cli {

namespace {

struct OnnxTestOptions {
  std::vector<std::string> dirs;
  std::string list, dataDir, writePassing, inputShapes;
  bool single = false, verbose = false;
  int optLevel = 3;
  double rtol = 1e-3, atol = 1e-5;
  std::string target = "llvm";
};

OnnxTestOptions& options() {
  static OnnxTestOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  OnnxTestOptions& o = options();
  CLI::App* sub = app.add_subcommand("onnx-test", "Run ONNX backend test directories through the compiler");
  sub->footer("Examples:\n"
              "  loom onnx-test examples/models/*\n"
              "  loom onnx-test /usr/share/libonnx-testdata/data/node/test_conv_*\n"
              "  loom onnx-test --list tests/onnx/expected_pass.txt "
              "--data-dir /usr/share/libonnx-testdata/data/node");
  sub->add_option("dirs", o.dirs, "Test directories (each with model.onnx and test_data_set_*/)");
  sub->add_option("--list", o.list, "Also run the tests named in this file (one per line, # comments)");
  sub->add_option("--data-dir", o.dataDir, "Directory the names in --list are relative to")
      ->default_val("/usr/share/libonnx-testdata/data/node");
  sub->add_option("--write-passing", o.writePassing, "Write the names of the passing tests to this file");
  sub->add_option("--opt-level", o.optLevel, "Optimization level 0-3")->check(CLI::Range(0, 3));
  sub->add_option("--target,-t", o.target, "Target: llvm (default), opencl (runs on the OpenCL device, e.g. PoCL) or cuda");
  sub->add_option("--input-shapes", o.inputShapes,
                  "Compile every model at these input shapes, as `loom compile` does (\"x:[N,3,32,W<=800]\": numbers, "
                  "symbols, ?, bounds), and run each test set on that one module; without it the shapes come from the "
                  "test sets (symbolic where they differ)");
  sub->add_option("--rtol", o.rtol, "Relative tolerance");
  sub->add_option("--atol", o.atol, "Absolute tolerance");
  sub->add_flag("--verbose,-v", o.verbose, "Print every test's result");
  sub->add_flag("--single", o.single, "Run one directory in this process (used by the parent)")->group("");
  return sub;
}

/// Whether a Dropout node's ratio input is a constant 0 (an initializer or a Constant node).
bool zeroRatio(const onnx::GraphProto& g, const onnx::NodeProto& dropout) {
  if (dropout.input_size() < 2 || dropout.input(1).empty()) return false;
  const std::string& name = dropout.input(1);
  auto isZero = [](const onnx::TensorProto& t) {
    if (t.data_type() != onnx::TensorProto::FLOAT) return false;
    float v = 1;
    if (t.float_data_size() == 1) v = t.float_data(0);
    else if (t.raw_data().size() == sizeof(float)) std::memcpy(&v, t.raw_data().data(), sizeof(float));
    return v == 0.0f;
  };
  for (const auto& t : g.initializer())
    if (t.name() == name) return isZero(t);
  for (const auto& c : g.node())
    if (c.op_type() == "Constant" && c.output_size() == 1 && c.output(0) == name)
      for (const auto& a : c.attribute())
        if (a.name() == "value") return isZero(a.t());
  return false;
}

/// Why a model is out of scope, or empty: sequence/optional/map values, string tensors,
/// training ops and training modes.
std::string outOfScope(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  if (!in || !m.ParseFromIstream(&in)) return {};
  auto typeReason = [](const onnx::TypeProto& t) -> std::string {
    if (t.has_sequence_type()) return "sequence type";
    if (t.has_optional_type()) return "optional type";
    if (t.has_map_type()) return "map type";
    if (t.has_tensor_type() && t.tensor_type().elem_type() == onnx::TensorProto::STRING) return "string tensors";
    return {};
  };
  const auto& g = m.graph();
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& v : *list)
      if (std::string r = typeReason(v.type()); !r.empty()) return r + " ('" + v.name() + "')";
  for (const auto& n : g.node()) {
    if (n.domain() == "ai.onnx.preview.training") return "training op " + n.op_type();
    for (const auto& a : n.attribute())
      if (a.name() == "training_mode" && a.i() != 0) return "training mode (" + n.op_type() + ")";
    // A training-mode Dropout with a constant ratio of 0 drops nothing (torchvision's Swin
    // exports its attention dropout that way); the importer takes it as the identity.
    if (n.op_type() == "Dropout" && n.input_size() >= 3 && !n.input(2).empty() && !zeroRatio(g, n))
      return "training mode (Dropout)";
  }
  return {};
}

/// bfloat16 test data that was read as uint16 (same bits) relabeled as `t`.
runtime::NDArray relabelBFloat16(const runtime::NDArray& a, runtime::DType t) {
  runtime::DType u16{runtime::DType::UInt, 16, 1};
  if (!(t.code == runtime::DType::BFloat && t.bits == 16 && a.dtype() == u16)) return a;
  runtime::NDArray r = runtime::NDArray::empty(a.shape(), t);
  if (r.byteSize()) r.copyFromBytes(a.data(), a.byteSize());
  return r;
}

/// Runs one test directory in this process; throws with the failure reason.
void runOne(const fs::path& dir, const OnnxTestOptions& o) {
  fs::path model = dir / "model.onnx";
  if (!fs::exists(model)) LOOM_THROW(ValueError) << dir.string() << ": no model.onnx";
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) LOOM_THROW(ValueError) << dir.string() << ": no test_data_set_*";
  auto load = [](const fs::path& d, const char* kind) {
    std::vector<runtime::NDArray> v;
    for (size_t i = 0; fs::exists(d / (kind + std::to_string(i) + ".pb")); ++i)
      v.push_back(frontend::loadTensorProto((d / (kind + std::to_string(i) + ".pb")).string()));
    return v;
  };
  std::vector<std::string> names = onnxInputNames(model.string());
  std::vector<runtime::NDArray> firstInputs = load(sets[0], "input_");
  frontend::ImportOptions io;
  // The test data fixes an input's shape where every test set gives it the same shape (models
  // may leave the batch symbolic); where the sets differ, the model's symbolic dims are kept and
  // one compiled module runs every set (a dynamic model, docs/dynamic-shapes.md).
  std::vector<bool> sameShape(firstInputs.size(), true);
  for (size_t k = 1; k < sets.size(); ++k) {
    std::vector<runtime::NDArray> in = load(sets[k], "input_");
    for (size_t i = 0; i < firstInputs.size() && i < in.size(); ++i)
      sameShape[i] = sameShape[i] && in[i].shape() == firstInputs[i].shape();
  }
  for (size_t i = 0; i < names.size() && i < firstInputs.size(); ++i)
    if (sameShape[i]) io.inputShapes[names[i]] = firstInputs[i].shape();
  graph::Module m;
  std::map<std::string, int64_t> bounds;
  if (!o.inputShapes.empty()) {
    // The user's shapes, as `loom compile` takes them (symbols, bounds); no guessing from the data.
    driver::LoadedModel lm = driver::loadModel(model.string(), o.inputShapes);
    m = lm.module;
    bounds = lm.symbolBounds;
  } else {
    try {
      try {
        m = frontend::importOnnx(model.string(), io);
      } catch (const frontend::ImportError& e) {
        // Test data that disagrees with a static declared shape: keep the model's shapes.
        if (std::string(e.what()).find("--input-shapes") == std::string::npos) throw;
        io.inputShapes.clear();
        m = frontend::importOnnx(model.string(), io);
      }
    } catch (const frontend::ImportError& e) {
      // Shape-like operands fed as graph inputs: bind those the importer needs as constants.
      std::string msg = e.what();
      for (int attempt = 0; attempt < 8 && !m.main().defined(); ++attempt) {
        size_t at = msg.find("') must be a constant");
        if (at == std::string::npos) LOOM_THROW(frontend::ImportError) << msg;
        size_t open = msg.rfind("('", at);
        std::string name = msg.substr(open + 2, at - open - 2);
        auto it = std::find(names.begin(), names.end(), name);
        if (it != names.end() && size_t(it - names.begin()) < firstInputs.size()) {
          io.constantInputs[name] = firstInputs[size_t(it - names.begin())];
          io.inputShapes.erase(name);
        } else {
          // Computed from graph inputs: bind every small integer input (sizes, axes, counts).
          bool bound = false;
          for (size_t i = 0; i < names.size() && i < firstInputs.size(); ++i) {
            const runtime::NDArray& a = firstInputs[i];
            bool integral = a.dtype().code == runtime::DType::Int || a.dtype().code == runtime::DType::UInt;
            if (integral && a.numel() <= 16 && !io.constantInputs.count(names[i])) {
              io.constantInputs[names[i]] = a;
              io.inputShapes.erase(names[i]);
              bound = true;
            }
          }
          // Then scalars of any type (Range's start/limit/delta, from which a Loop's trip count
          // is computed: the output's shape depends on their values).
          if (!bound)
            for (size_t i = 0; i < names.size() && i < firstInputs.size(); ++i)
              if (firstInputs[i].numel() == 1 && !io.constantInputs.count(names[i])) {
                io.constantInputs[names[i]] = firstInputs[i];
                io.inputShapes.erase(names[i]);
                bound = true;
              }
          if (!bound) LOOM_THROW(frontend::ImportError) << msg;
        }
        try {
          m = frontend::importOnnx(model.string(), io);
        } catch (const frontend::ImportError& again) {
          msg = again.what();
        }
      }
      if (!m.main().defined()) LOOM_THROW(frontend::ImportError) << msg;
    }
  }
  // Inputs no op reads (CastLike's `like`, whose type alone matters): the test data may give
  // them another shape than the model declares (the CastLike bfloat16 tests feed [1] for [3, 4]);
  // such an input gets zeros of its declared shape instead.
  std::set<std::string> unread;
  {
    std::set<const graph::ExprNode*> seen;
    for (const graph::Expr& e : graph::postOrder(m.main()->body)) seen.insert(e.get());
    for (const graph::Var& p : m.main()->params)
      if (!seen.count(p.get())) unread.insert(p->name);
  }
  driver::CompileModelOptions co;
  co.optLevel = o.optLevel;
  if (driver::isGPUTarget(o.target)) runtime::useDevicePluginsBesideProgram();
  driver::CompiledModel cm = driver::compileModel(m, o.target, {}, co);
  driver::applySymbolBounds(cm, bounds);
  auto ex = driver::createExecutor(cm);
  for (const fs::path& set : sets) {
    std::vector<runtime::NDArray> inputs = load(set, "input_"), expected = load(set, "output_");
    size_t k = 0;
    for (size_t i = 0; i < inputs.size() && i < names.size(); ++i) {
      if (io.constantInputs.count(names[i])) continue;
      if (k >= ex->numInputs()) break;
      runtime::NDArray in = relabelBFloat16(inputs[i], ex->inputDType(k));
      std::vector<int64_t> declared = ex->inputShape(k);
      bool fixed = std::all_of(declared.begin(), declared.end(), [](int64_t d) { return d >= 0; });
      if (unread.count(ex->inputName(k)) && fixed && in.shape() != declared) {
        in = runtime::NDArray::empty(declared, ex->inputDType(k));
        if (in.byteSize()) std::memset(in.data(), 0, in.byteSize());
      }
      ex->setInput(k, in);
      ++k;
    }
    ex->run();
    if (ex->numOutputs() < expected.size())
      LOOM_THROW(ValueError) << set.filename().string() << ": " << ex->numOutputs() << " outputs, expected "
                             << expected.size();
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string why;
      if (!allClose(ex->getOutput(i), relabelBFloat16(expected[i], ex->outputDType(i)), o.rtol, o.atol, &why))
        LOOM_THROW(ValueError) << set.filename().string() << ": output " << i << ": " << why;
    }
  }
}

/// The first line of `s` (reasons stay on one line).
std::string oneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s;
}

int runSingle(const OnnxTestOptions& o) {
  alarm(300);
  const fs::path dir = o.dirs.at(0);
  std::string skip = outOfScope((dir / "model.onnx").string());
  if (!skip.empty()) {
    std::cout << "RESULT SKIP " << skip << std::endl;
    return 0;
  }
  try {
    runOne(dir, o);
    std::cout << "RESULT PASS" << std::endl;
  } catch (const std::exception& e) {
    std::cout << "RESULT FAIL " << oneLine(e.what()) << std::endl;
  }
  return 0;
}

std::string selfPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "loom";
  return std::string(buf, size_t(n));
}

std::string quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

int run() {
  const OnnxTestOptions& o = options();
  if (o.single) {
    if (o.dirs.size() != 1) LOOM_THROW(ValueError) << "--single takes exactly one directory";
    return runSingle(o);
  }
  std::vector<std::string> dirs = o.dirs;
  if (!o.list.empty()) {
    std::ifstream in(o.list);
    if (!in) LOOM_THROW(ValueError) << o.list << ": cannot open test list";
    for (std::string line; std::getline(in, line);) {
      line = line.substr(0, line.find('#'));
      while (!line.empty() && std::isspace(uint8_t(line.back()))) line.pop_back();
      if (!line.empty()) dirs.push_back((fs::path(o.dataDir) / line).string());
    }
  }
  if (dirs.empty()) LOOM_THROW(ValueError) << "no test directories given";
  if (!o.inputShapes.empty()) driver::parseInputShapes(o.inputShapes);  // bad text: one error, exit 1
  std::string self = selfPath();
  int passed = 0, failed = 0, skipped = 0;
  std::vector<std::string> failures, skips, passing;
  for (const std::string& d : dirs) {
    std::string name = fs::path(d).filename().string();
    if (name.empty()) name = fs::path(d).parent_path().filename().string();
    if (!fs::is_directory(d)) {
      std::cout << "ignored: " << d << " (not a directory)\n";
      continue;
    }
    std::string cmd = quote(self) + " onnx-test --single --opt-level " + std::to_string(o.optLevel) +
                      " --target " + quote(o.target) +
                      (o.inputShapes.empty() ? std::string() : " --input-shapes " + quote(o.inputShapes)) +
                      " --rtol " + std::to_string(o.rtol) + " --atol " + std::to_string(o.atol) + " " + quote(d) + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    if (p) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    }
    int status = p ? pclose(p) : -1;
    size_t at = out.rfind("RESULT ");
    std::string result = at == std::string::npos ? "" : oneLine(out.substr(at + 7));
    while (!result.empty() && std::isspace(uint8_t(result.back()))) result.pop_back();
    if (result.rfind("PASS", 0) == 0) {
      ++passed;
      passing.push_back(name);
      if (o.verbose) std::cout << "PASS " << name << "\n";
    } else if (result.rfind("SKIP", 0) == 0) {
      ++skipped;
      skips.push_back(name + ": " + result.substr(5));
      if (o.verbose) std::cout << "SKIP " << name << ": " << result.substr(5) << "\n";
    } else {
      ++failed;
      std::string why = result.rfind("FAIL", 0) == 0 ? result.substr(5) : "";
      if (why.empty()) {
        if (WIFSIGNALED(status)) why = "crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
        else if (status != 0 && WIFEXITED(status)) why = "exited with status " + std::to_string(WEXITSTATUS(status));
        else why = "no result";
        if (!out.empty()) why += ": " + oneLine(out.substr(out.size() > 200 ? out.size() - 200 : 0));
      }
      failures.push_back(name + ": " + why);
      if (o.verbose) std::cout << "FAIL " << name << ": " << why << "\n";
    }
    std::cout.flush();
  }
  if (!o.writePassing.empty()) {
    std::ofstream f(o.writePassing);
    for (const std::string& n : passing) f << n << "\n";
    f.close();
    if (!f) LOOM_THROW(ValueError) << "cannot write '" << o.writePassing << "': " << std::strerror(errno);
  }
  for (const std::string& s : skips) std::cout << "skipped: " << s << "\n";
  for (const std::string& f : failures) std::cout << "failed: " << f << "\n";
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped" << std::endl;
  return failed == 0 ? 0 : 1;
}

const bool registered = addCommand({setup, run});

}  // namespace

}  // namespace loom::cli
