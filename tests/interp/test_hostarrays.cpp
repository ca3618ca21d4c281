// Host array helpers: random fill, element access, error measures, printing, half / bfloat16 codecs.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "Harness.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;
using runtime::NDArray;

class TestHostArrays : public QObject {
  Q_OBJECT
private slots:
  void fillRandomIsDeterministicAndInRange() {
    NDArray a = randomArray({64}, 7), b = randomArray({64}, 7), c = randomArray({64}, 8);
    QCOMPARE(std::memcmp(a.data(), b.data(), a.byteSize()), 0);
    QVERIFY(std::memcmp(a.data(), c.data(), a.byteSize()) != 0);
    bool neg = false, pos = false;
    for (int i = 0; i < 64; ++i) {
      float v = a.as<float>()[i];
      QVERIFY(v >= -1.0f && v <= 1.0f);
      neg |= v < 0;
      pos |= v > 0;
    }
    QVERIFY(neg && pos);
    NDArray ints = randomArray({200}, 1, DataType::Int(32)), u = randomArray({200}, 1, DataType::UInt(8));
    NDArray bools = randomArray({200}, 1, DataType::Bool()), h = randomArray({200}, 1, DataType::Float(16));
    int trues = 0;
    for (int i = 0; i < 200; ++i) {
      QVERIFY(std::abs(ints.as<int32_t>()[i]) <= 4);
      QVERIFY(u.as<uint8_t>()[i] <= 8);
      QVERIFY(bools.as<uint8_t>()[i] <= 1);
      trues += bools.as<uint8_t>()[i];
      QVERIFY(std::fabs(getElement(h, i)) <= 1.0);
    }
    QVERIFY(trues > 50 && trues < 150);
  }

  void elementAccess() {
    NDArray a = array({2, 3}, DataType::Int(8));
    setElement(a, 4, 300.7);  // truncates, wraps
    QCOMPARE(getElement(a, 4), 44.0);
    NDArray b = array({3}, DataType::BFloat16());
    setElement(b, 1, 1.0 + std::ldexp(1.0, -8));
    QCOMPARE(getElement(b, 1), 1.0);
    bool threw = false;
    try {
      getElement(a, 6);
    } catch (const ValueError&) {
      threw = true;
    }
    QVERIFY(threw);
  }

  void maxRelErrorAndAllClose() {
    NDArray want = array({4}), got = array({4});
    const float w[4] = {1.0f, -2.0f, 100.0f, 0.0f};
    for (int i = 0; i < 4; ++i) want.as<float>()[i] = got.as<float>()[i] = w[i];
    QCOMPARE(maxRelError(got, want), 0.0);
    QVERIFY(allClose(got, want, 0, 0));
    got.as<float>()[1] = -2.002f;
    QVERIFY(std::fabs(maxRelError(got, want) - 0.001) < 1e-6);
    QVERIFY(!allClose(got, want, 1e-4, 0));
    QVERIFY(allClose(got, want, 2e-3, 0));
    // Near-zero entries are measured against 1e-3 of the tensor's magnitude (100 here).
    got.as<float>()[1] = -2.0f;
    got.as<float>()[3] = 1e-3f;
    QVERIFY(std::fabs(maxRelError(got, want) - 1e-2) < 1e-6);
    // NaN never passes, even against NaN.
    got.as<float>()[3] = std::numeric_limits<float>::quiet_NaN();
    QVERIFY(std::isinf(maxRelError(got, want)));
    QVERIFY(!allClose(got, want, 1, 1));
    want.as<float>()[3] = std::numeric_limits<float>::quiet_NaN();
    QVERIFY(std::isinf(maxRelError(got, want)));
    QVERIFY(!allClose(got, want, 1, 1));
    // equalNan (the differential tester's oracle): a NaN matches a NaN at the same index only.
    QVERIFY(allClose(got, want, 0, 0, /*equalNan=*/true));
    QVERIFY(mismatchReport(got, want, 0, 0, true).empty());
    got.as<float>()[3] = 0.0f;
    QVERIFY(!allClose(got, want, 1, 1, true));
    got.as<float>()[3] = std::numeric_limits<float>::quiet_NaN();
    want.as<float>()[3] = 0.0f;
    QVERIFY(!allClose(got, want, 1, 1, true));
    QVERIFY(mismatchReport(got, want, 1, 1, true).find("1 of 4 elements differ") != std::string::npos);
    // Matching infinities are equal; a finite value against inf is not.
    got.as<float>()[3] = want.as<float>()[3] = std::numeric_limits<float>::infinity();
    QCOMPARE(maxRelError(got, want), 0.0);
    got.as<float>()[3] = 1e30f;
    QVERIFY(std::isinf(maxRelError(got, want)));
    bool threw = false;
    try {
      maxRelError(array({3}), array({4}));
    } catch (const ValueError& e) {
      threw = QString(e.what()).contains("[3]");
    }
    QVERIFY(threw);
    QVERIFY(!allClose(array({3}), array({4})));
  }

  void printing() {
    NDArray a = array({2, 3});
    for (int i = 0; i < 6; ++i) a.as<float>()[i] = float(i + 1);
    QCOMPARE(QString::fromStdString(formatArray(a)), QString("float32[2, 3] [[1, 2, 3], [4, 5, 6]]"));
    QCOMPARE(QString::fromStdString(formatArray(a, 4)), QString("float32[2, 3] [[1, 2, 3], [4, ...]]"));
    NDArray b = a.copy();
    QVERIFY(mismatchReport(a, b).empty());
    b.as<float>()[5] = 6.5f;
    QString r = QString::fromStdString(mismatchReport(a, b));
    QVERIFY2(r.contains("1 of 6") && r.contains("[1, 2]") && r.contains("6.5"), qPrintable(r));
    QVERIFY(QString::fromStdString(mismatchReport(a, array({6}))).contains("[6]"));
  }

  void halfCodecMatchesHardware() {
    // Every half bit pattern decodes and re-encodes to itself (NaNs stay NaN).
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      double v = fromHalfBits(uint16_t(bits));
      if (std::isnan(v)) {
        QVERIFY(std::isnan(fromHalfBits(toHalfBits(v))));
        continue;
      }
      if (toHalfBits(v) != bits) QFAIL(qPrintable(QString("half 0x%1 does not round-trip").arg(bits, 0, 16)));
      _Float16 hw;
      std::memcpy(&hw, &bits, 2);
      if (double(hw) != v) QFAIL(qPrintable(QString("half 0x%1 decodes differently").arg(bits, 0, 16)));
    }
    // Rounding of random doubles agrees with the compiler's _Float16 conversion.
    std::mt19937_64 rng(3);
    for (int i = 0; i < 100000; ++i) {
      double v = std::ldexp(double(rng() >> 11) * 0x1p-53 * 2 - 1, int(rng() % 44) - 28);
      _Float16 hw = _Float16(v);
      uint16_t hb;
      std::memcpy(&hb, &hw, 2);
      if (toHalfBits(v) != hb) QFAIL(qPrintable(QString("half of %1").arg(v, 0, 'g', 17)));
    }
  }

  void bfloat16CodecMatchesBitTrick() {
    std::mt19937_64 rng(4);
    for (int i = 0; i < 100000; ++i) {
      float f = float(std::ldexp(double(rng() >> 11) * 0x1p-53 * 2 - 1, int(rng() % 200) - 100));
      uint32_t u;
      std::memcpy(&u, &f, 4);
      auto want = uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);  // round to nearest even
      if (toBFloat16Bits(f) != want) QFAIL(qPrintable(QString("bfloat16 of %1").arg(double(f), 0, 'g', 9)));
      float back;
      uint32_t wb = uint32_t(want) << 16;
      std::memcpy(&back, &wb, 4);
      if (fromBFloat16Bits(want) != double(back)) QFAIL("bfloat16 decode");
    }
  }
};

QTEST_APPLESS_MAIN(TestHostArrays)
#include "test_hostarrays.moc"
