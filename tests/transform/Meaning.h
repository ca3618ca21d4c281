// Meaning checks for the lowering tests: run a function before and after a pass on random inputs.
#pragma once
#include <QtTest>

#include <string>
#include <vector>

#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"
#include "core/tir/Printer.h"
#include "core/tir/Visitor.h"

namespace loom::transform::testing {

/// Host arrays for every parameter of `f` (constant shapes), filled from `seed`.
inline std::vector<runtime::NDArray> randomArgs(const tir::PrimFunc& f, uint64_t seed) {
  std::vector<runtime::NDArray> out;
  for (size_t i = 0; i < f->params.size(); ++i) {
    tir::Buffer b = f->paramBuffer(i);
    std::vector<int64_t> shape;
    for (auto& e : b->shape) shape.push_back(*tir::asConstInt(e));
    runtime::DType dt{uint8_t(b->dtype.code()), uint8_t(b->dtype.bits()), uint16_t(b->dtype.lanes())};
    auto a = runtime::NDArray::empty(shape, dt);
    tir::fillRandom(a, seed * 131 + i);
    out.push_back(a);
  }
  return out;
}

inline std::vector<tir::Arg> asArgs(const std::vector<runtime::NDArray>& arrays) {
  return std::vector<tir::Arg>(arrays.begin(), arrays.end());
}

/// Empty when `before` and `after` compute the same arrays (every parameter compared after the
/// run) on a few random inputs; otherwise what differs, with both functions printed.
inline std::string meaningDiff(const tir::PrimFunc& before, const tir::PrimFunc& after, double rtol = 1e-5,
                               int trials = 2) {
  for (int t = 0; t < trials; ++t) {
    auto a = randomArgs(before, 17 + t), b = randomArgs(before, 17 + t);
    tir::interpret(before, asArgs(a));
    try {
      tir::interpret(after, asArgs(b));
    } catch (const ::loom::Error& e) {
      return std::string("after fails: ") + e.what() + "\n" + tir::printFunc(after);
    }
    for (size_t i = 0; i < a.size(); ++i) {
      std::string r = tir::mismatchReport(b[i], a[i], rtol, 1e-6);
      if (!r.empty())
        return "param " + std::to_string(i) + ": " + r + "\nbefore:\n" + tir::printFunc(before) + "\nafter:\n" +
               tir::printFunc(after);
    }
  }
  return {};
}

#define EXPECT_SAME_MEANING(before, after)                                                       \
  do {                                                                                           \
    std::string diff_ = ::loom::transform::testing::meaningDiff(before, after);                  \
    QVERIFY2(diff_.empty(), diff_.c_str());                                                      \
  } while (0)

/// How many nodes of `kind` the function body holds.
inline int countNodes(const tir::PrimFunc& f, tir::NodeKind kind) {
  int n = 0;
  tir::postOrderVisit(f->body, [&](const tir::IRNode* x) { n += x->nodeKind == kind; });
  return n;
}

inline int countLoops(const tir::PrimFunc& f, tir::ForKind kind) {
  int n = 0;
  tir::postOrderVisit(f->body, [&](const tir::IRNode* x) {
    if (auto* l = dynamic_cast<const tir::ForNode*>(x)) n += l->kind == kind;
  });
  return n;
}

/// True when every buffer access in the body is 1-D.
inline bool allFlat(const tir::PrimFunc& f) {
  bool flat = true;
  tir::postOrderVisit(f->body, [&](const tir::IRNode* x) {
    if (auto* l = dynamic_cast<const tir::BufferLoadNode*>(x)) flat &= l->indices.size() == 1;
    if (auto* s = dynamic_cast<const tir::BufferStoreNode*>(x)) flat &= s->indices.size() == 1;
  });
  return flat;
}

}  // namespace loom::transform::testing
