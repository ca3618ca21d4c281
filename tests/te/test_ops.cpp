// The reusable TE ops on general shapes, run in the interpreter against direct loops, and their
// shape errors.
#include <QtTest>

#include <cmath>

#include "core/support/Error.h"
#include "core/te/CreatePrimFunc.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/topi/Ops.h"
#include "core/topi/Workloads.h"

using namespace loom;
using tir::Expr;
using tir::Var;

namespace {

te::Tensor input(std::vector<Expr> shape, const char* name) {
  return te::placeholder(std::move(shape), DataType::Float(32), name);
}

/// Runs createPrimFunc(inputs..., out) on random inputs; returns all arrays (inputs then output).
std::vector<runtime::NDArray> run(std::vector<te::Tensor> args, uint64_t seed = 1) {
  tir::PrimFunc f = te::createPrimFunc(args);
  std::vector<runtime::NDArray> arrays = topi::makeParamArrays(f);
  for (size_t i = 0; i + 1 < arrays.size(); ++i)
    tir::fillRandom(arrays[i], seed + i);
  tir::interpret(f, std::vector<tir::Arg>(arrays.begin(), arrays.end()));
  return arrays;
}

double at(const runtime::NDArray& a, std::initializer_list<int64_t> idx) {
  int64_t off = 0;
  size_t d = 0;
  for (auto i : idx)
    off = off * a.shape()[d++] + i;
  return tir::getElement(a, off);
}

template <class F> std::string errorOf(F&& f) {
  try {
    f();
  } catch (const loom::ValueError& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

class TestOps : public QObject {
  Q_OBJECT

private slots:
  void addBroadcasts() {
    te::Tensor A = input({2, 1, 3}, "A"), B = input({4, 1}, "B");
    te::Tensor C = topi::add(A, B);
    QCOMPARE(C->ndim(), size_t(3));
    auto r = run({A, B, C});
    QCOMPARE(r[2].shape(), (std::vector<int64_t>{2, 4, 3}));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 3; ++k)
          QCOMPARE(float(at(r[2], {i, j, k})), float(at(r[0], {i, 0, k}) + at(r[1], {j, 0})));
    QVERIFY(errorOf([&] {
              topi::add(input({2, 3}, "X"), input({4}, "Y"));
            }).find("do not broadcast (dimension 1)") != std::string::npos);
  }

  void transposeAxes() {
    te::Tensor A = input({2, 3, 4}, "A");
    auto r = run({A, topi::transpose(A, {1, 2, 0})});
    QCOMPARE(r[1].shape(), (std::vector<int64_t>{3, 4, 2}));
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 2; ++k)
          QCOMPARE(at(r[1], {i, j, k}), at(r[0], {k, i, j}));
    auto rev = run({A, topi::transpose(A)});
    QCOMPARE(rev[1].shape(), (std::vector<int64_t>{4, 3, 2}));
    QCOMPARE(at(rev[1], {3, 1, 0}), at(rev[0], {0, 1, 3}));
    QVERIFY(errorOf([&] {
              topi::transpose(A, {0, 0, 1});
            }).find("permutation") != std::string::npos);
  }

  void sumAnyAxis() {
    te::Tensor A = input({3, 4}, "A");
    auto r0 = run({A, topi::sum(A, 0)});
    auto r1 = run({A, topi::sum(A, -1)});
    for (int64_t j = 0; j < 4; ++j) {
      double s = 0;
      for (int64_t i = 0; i < 3; ++i)
        s += at(r0[0], {i, j});
      QVERIFY(std::fabs(at(r0[1], {j}) - s) < 1e-5);
    }
    for (int64_t i = 0; i < 3; ++i) {
      double s = 0;
      for (int64_t j = 0; j < 4; ++j)
        s += at(r1[0], {i, j});
      QVERIFY(std::fabs(at(r1[1], {i}) - s) < 1e-5);
    }
    QVERIFY(errorOf([&] { topi::sum(A, 2); }).find("axis 2 is out of range") != std::string::npos);
  }

  void softmaxAndLayerNormOnRank3() {
    te::Tensor A = input({2, 3, 5}, "A");
    auto r = run({A, topi::softmax(A)});
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double denom = 0;
        for (int64_t k = 0; k < 5; ++k)
          denom += std::exp(at(r[0], {i, j, k}));
        for (int64_t k = 0; k < 5; ++k)
          QVERIFY(std::fabs(at(r[1], {i, j, k}) - std::exp(at(r[0], {i, j, k})) / denom) < 1e-6);
      }
    te::Tensor g = input({5}, "gamma"), b = input({5}, "beta");
    auto l = run({A, g, b, topi::layerNorm(A, g, b)});
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double mean = 0, var = 0;
        for (int64_t k = 0; k < 5; ++k)
          mean += at(l[0], {i, j, k}) / 5;
        for (int64_t k = 0; k < 5; ++k)
          var += std::pow(at(l[0], {i, j, k}) - mean, 2) / 5;
        for (int64_t k = 0; k < 5; ++k) {
          double want =
              (at(l[0], {i, j, k}) - mean) / std::sqrt(var + 1e-5) * at(l[1], {k}) + at(l[2], {k});
          QVERIFY(std::fabs(at(l[3], {i, j, k}) - want) < 1e-4 * std::max(1.0, std::fabs(want)));
        }
      }
    QVERIFY(errorOf([&] { topi::layerNorm(A, input({4}, "g4"), b); }).find("'g4'") !=
            std::string::npos);
  }

  void padAsymmetric() {
    te::Tensor A = input({2, 3}, "A");
    te::Tensor P = topi::pad(A, {1, 0}, {2, 3}, 7.0);
    auto r = run({A, P});
    QCOMPARE(r[1].shape(), (std::vector<int64_t>{5, 6}));
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 6; ++j) {
        bool inside = i >= 1 && i < 3 && j < 3;
        QCOMPARE(at(r[1], {i, j}), inside ? at(r[0], {i - 1, j}) : 7.0);
      }
    QVERIFY(topi::pad(A, {0, 0}, {0, 0}).same_as(A));
    QVERIFY(errorOf([&] { topi::pad(A, {1}, {1}); }).find("rank 2") != std::string::npos);
  }

  void shapeErrors() {
    QVERIFY(errorOf([&] {
              topi::matmul(input({2, 3}, "A"), input({4, 5}, "B"));
            }).find("inner dimensions") != std::string::npos);
    QVERIFY(errorOf([&] {
              topi::matmul(input({2}, "A"), input({2, 5}, "B"));
            }).find("rank 1, expected 2") != std::string::npos);
    QVERIFY(errorOf([&] {
              topi::conv2dNchw(input({1, 4, 5, 5}, "data"), input({6, 3, 3, 3}, "w"), 1, 1, 1, 2);
            }).find("do not fit groups=2") != std::string::npos);
    QVERIFY(errorOf([&] {
              topi::conv2dNchw(input({1, 4, 2, 2}, "data"), input({4, 4, 5, 5}, "w"), 1, 0, 1);
            }).find("does not fit") != std::string::npos);
    Var n = tir::makeVar("n");
    QVERIFY(errorOf([&] {
              topi::conv2dNchw(input({1, n, 5, 5}, "data"), input({4, 4, 3, 3}, "w"), 1, 1, 1);
            }).find("must be a constant") != std::string::npos);
  }

  // A symbolic batch passes through conv2d; the result has the same symbolic extent.
  void symbolicBatch() {
    Var n = tir::makeVar("n");
    te::Tensor out =
        topi::conv2dNchw(input({n, 2, 5, 5}, "data"), input({3, 2, 3, 3}, "w"), 2, 1, 1);
    QVERIFY(out->shape[0].same_as(n));
    QVERIFY(tir::isConstInt(out->shape[2], 3));
  }
};

QTEST_APPLESS_MAIN(TestOps)
#include "test_ops.moc"
