// The GPU backend's line map: each line of emitted CUDA C / OpenCL C names the TIR statement that
// wrote it and the loop around it, and makeGPUListing maps the lines to the printed loops.
#include <QtTest>
#include <cctype>
#include <sstream>

#include "GPUTestUtil.h"
#include "codegen/CodeGenCUDA.h"
#include "codegen/Listing.h"
#include "core/tir/Printer.h"
#include "core/tir/Visitor.h"
#include "core/transform/GPUKernels.h"
#include "core/transform/GPUSchedules.h"

using namespace loom;

namespace {

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string trimmed(const std::string& s) {
  size_t a = s.find_first_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a);
}

/// `s` holds `node` (or is it).
bool contains(const tir::Stmt& s, const tir::IRNode* node) {
  bool found = false;
  tir::postOrderVisit(s, [&](const tir::IRNode* n) { found |= n == node; });
  return found;
}

/// The C spelling of a TIR name as the backend defines it (before a clash suffix).
std::string cName(const std::string& n) {
  std::string out;
  for (char c : n) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

/// `v` is `base`, or `base_<k>` (the backend's suffix for a name already taken).
bool isNameOf(const std::string& v, const std::string& base) {
  if (v == base) return true;
  if (v.rfind(base + "_", 0) != 0 || v.size() == base.size() + 1) return false;
  for (size_t i = base.size() + 1; i < v.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) return false;
  return true;
}

/// Checks the map of `program`'s source in `dialect` line by line.
void checkMap(const transform::DeviceProgram& program, codegen::GPUDialect dialect) {
  codegen::GPUSource src = codegen::emitGPUSourceWithMap({program}, dialect);
  QCOMPARE(src.text, codegen::emitGPUSource(program, dialect));  // the same text as without the map
  std::vector<std::string> lines = splitLines(src.text);
  QCOMPARE(src.lines.size(), lines.size());
  int fors = 0, stores = 0, syncs = 0;
  std::vector<const tir::ForNode*> open;  // loops whose braces are open, by the text's braces
  std::vector<bool> braceIsLoop;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string t = trimmed(lines[i]);
    const codegen::GPUSourceLine& owner = src.lines[i];
    std::string where = "line " + std::to_string(i + 1) + ": " + lines[i];
    // Which kernel the line is in: its statement and loop are nodes of that kernel's body.
    if (owner.stmt) {
      bool inSomeKernel = false;
      for (const auto& k : program.kernels)
        if (contains(k.body, owner.stmt)) {
          inSomeKernel = true;
          if (owner.loop) QVERIFY2(contains(k.body, owner.loop), where.c_str());
        }
      QVERIFY2(inSomeKernel, where.c_str());
    }
    // The loop is around the statement (or is it).
    if (owner.loop) {
      QVERIFY2(owner.stmt, where.c_str());
      QVERIFY2(owner.loop == owner.stmt || contains(owner.loop->body, owner.stmt), where.c_str());
    }
    if (t.rfind("for (", 0) == 0) {
      ++fors;
      QVERIFY2(owner.loop && owner.stmt == owner.loop, where.c_str());
      std::string var = t.substr(5);
      var = var.substr(var.find(' ') + 1);
      var = var.substr(0, var.find(' '));
      QVERIFY2(isNameOf(var, cName(owner.loop->loopVar->name)), where.c_str());
      // Nested in the loop of the braces around it.
      if (!open.empty()) QVERIFY2(contains(open.back()->body, owner.loop), where.c_str());
    } else if (t == "__syncthreads();" || t == "barrier(CLK_LOCAL_MEM_FENCE);") {
      ++syncs;
      QVERIFY2(owner.stmt && owner.stmt->nodeKind == tir::NodeKind::Evaluate, where.c_str());
    } else if (t.find(" = ") != std::string::npos && t.find('[') < t.find(" = ") && t.back() == ';' &&
               t.rfind("__", 0) != 0) {
      ++stores;
      QVERIFY2(owner.stmt && owner.stmt->nodeKind == tir::NodeKind::BufferStore, where.c_str());
      auto* store = static_cast<const tir::BufferStoreNode*>(owner.stmt);
      QVERIFY2(isNameOf(t.substr(0, t.find('[')), cName(store->buffer->data->name)), where.c_str());
    }
    // Inside a loop's braces, a line belongs to that loop or to one nested in it.
    if (!open.empty() && t != "}") {
      QVERIFY2(owner.loop, where.c_str());
      QVERIFY2(owner.loop == open.back() || contains(open.back()->body, owner.loop), where.c_str());
    }
    for (char c : lines[i]) {
      if (c == '{') {
        bool loop = t.rfind("for (", 0) == 0;
        braceIsLoop.push_back(loop);
        if (loop) open.push_back(owner.loop);
      } else if (c == '}' && !braceIsLoop.empty()) {
        if (braceIsLoop.back()) {
          // The closing brace is the loop's.
          QVERIFY2(owner.loop == open.back(), where.c_str());
          open.pop_back();
        }
        braceIsLoop.pop_back();
      }
    }
  }
  QVERIFY(fors > 0);
  QVERIFY(stores > 0);
  (void)syncs;
}

}  // namespace

class TestGPULineMap : public QObject {
  Q_OBJECT
private slots:
  void sharedMatmulBothDialects() {
    auto c = gputest::lowerForGPU("matmul:M=32,N=32,K=32", transform::gpuScheduleMatmulShared(8));
    transform::DeviceProgram p = transform::splitHostDevice(c.lowered);
    checkMap(p, codegen::GPUDialect::CUDA);
    checkMap(p, codegen::GPUDialect::OpenCL);
    // Barriers are mapped to their statements.
    codegen::GPUSource src = codegen::emitGPUSourceWithMap({p}, codegen::GPUDialect::CUDA);
    QVERIFY(src.text.find("__syncthreads();") != std::string::npos);
  }

  /// Four kernels whose loops share variable names: each line's loop is its own kernel's.
  void kernelsWithTheSameLoopNames() {
    auto spec = topi::parseWorkloadSpec("softmax:M=8,N=16");
    auto c = gputest::lowerForGPU("softmax:M=8,N=16", transform::gpuScheduleFlat(topi::buildWorkload(spec), 16));
    transform::DeviceProgram p = transform::splitHostDevice(c.lowered);
    QVERIFY(p.kernels.size() > 1);
    checkMap(p, codegen::GPUDialect::OpenCL);
    checkMap(p, codegen::GPUDialect::CUDA);
  }

  /// The listing maps each line to the printed line of its loop: that TIR line is the loop's
  /// `for` (its variable printed there), and lines outside loops map to 0.
  void listingMapsToPrintedLoops() {
    auto c = gputest::lowerForGPU("matmul:M=32,N=32,K=32", transform::gpuScheduleMatmulShared(8));
    for (auto dialect : {codegen::GPUDialect::CUDA, codegen::GPUDialect::OpenCL}) {
      codegen::Listing l = codegen::makeGPUListing(c.lowered, dialect);
      QCOMPARE(l.tir, tir::printFunc(c.lowered));
      std::vector<std::string> tirLines = splitLines(l.tir);
      std::string text;
      int mapped = 0;
      for (const codegen::AsmLine& a : l.asmLines) {
        text += a.text + "\n";
        if (a.tirLine == 0) continue;
        ++mapped;
        QVERIFY(a.tirLine <= int(tirLines.size()));
        QVERIFY2(tirLines[size_t(a.tirLine - 1)].find("for ") != std::string::npos, a.text.c_str());
        std::string t = trimmed(a.text);
        if (t.rfind("for (", 0) == 0) {
          std::string var = t.substr(5);
          var = var.substr(var.find(' ') + 1);
          var = var.substr(0, var.find(' '));
          // The printed loop line names the variable (C spelling aside).
          std::string printed = tirLines[size_t(a.tirLine - 1)];
          std::string base = var;
          if (size_t u = var.rfind('_'); u != std::string::npos && std::all_of(var.begin() + long(u) + 1, var.end(), ::isdigit) && u + 1 < var.size())
            base = var.substr(0, u);
          std::string cPrinted = cName(printed);
          QVERIFY2(cPrinted.find("for_" + var + "_in") != std::string::npos || cPrinted.find("for_" + base + "_in") != std::string::npos,
                   (printed + " / " + var).c_str());
        }
      }
      QCOMPARE(text, codegen::emitGPUSource(transform::splitHostDevice(c.lowered), dialect));
      QVERIFY(mapped > 0);
      QCOMPARE(l.asmLines.front().tirLine, 0);  // the prelude
    }
  }
};

QTEST_APPLESS_MAIN(TestGPULineMap)
#include "test_gpu_line_map.moc"
