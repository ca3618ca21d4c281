// storage_align through lowering: lower-blocks carries "buffer_dim_align" to the Allocate and
// flatten-buffers pads the strides (stride[axis] % factor == offset) without changing the meaning.
#include <QtTest>

#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/topi/Workloads.h"
#include "core/transform/FlattenBuffers.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/Pipeline.h"
#include "tests/transform/Meaning.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {

PrimFunc scheduled(const std::string& spec, const std::string& script) {
  Schedule sch(topi::buildWorkload(topi::parseWorkloadSpec(spec)));
  ScriptResult r = runScript(sch, script);
  if (!r.ok) qFatal("%s\n%s", r.message.c_str(), r.detail.c_str());
  return sch.func();
}

/// The element counts of every Allocate, by the name of its data var.
std::map<std::string, std::vector<int64_t>> allocations(const PrimFunc& f) {
  std::map<std::string, std::vector<int64_t>> out;
  postOrderVisit(f->body, [&](const IRNode* x) {
    if (auto* a = dynamic_cast<const AllocateNode*>(x)) {
      std::vector<int64_t>& v = out[a->bufferVar->name];
      for (auto& e : a->extents) v.push_back(asConstInt(e) ? *asConstInt(e) : -1);
    }
  });
  return out;
}

}  // namespace

class TestStorageAlign : public QObject {
  Q_OBJECT
private slots:
  void paddedRowStride_data() {
    QTest::addColumn<int>("factor");
    QTest::addColumn<int>("offset");
    QTest::addColumn<int>("stride");  ///< the padded row stride of the 16 x 16 copy
    QTest::newRow("16, 1") << 16 << 1 << 17;
    QTest::newRow("8, 1") << 8 << 1 << 17;
    QTest::newRow("4, 2") << 4 << 2 << 18;
    QTest::newRow("32, 0") << 32 << 0 << 32;
    QTest::newRow("16, 0 (already aligned)") << 16 << 0 << 16;
    QTest::newRow("5, 3") << 5 << 3 << 18;
  }
  void paddedRowStride() {
    QFETCH(int, factor);
    QFETCH(int, offset);
    QFETCH(int, stride);
    PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=16,N=16,K=16"));
    PrimFunc s = scheduled("matmul:M=16,N=16,K=16",
                           "b = sch.get_block(\"C\")\n"
                           "a = sch.cache_read(b, 0, \"global\")\n"
                           "sch.storage_align(a, 0, axis=0, factor=" + std::to_string(factor) +
                               ", offset=" + std::to_string(offset) + ")\n");
    // lower-blocks moves the entry from the block to the Allocate of the copy.
    PrimFunc lb = lowerBlocks(s);
    bool carried = false;
    postOrderVisit(lb->body, [&](const IRNode* x) {
      if (auto* a = dynamic_cast<const AllocateNode*>(x)) carried |= a->annotations.count(kBufferDimAlign) > 0;
    });
    QVERIFY(carried);
    // flatten-buffers allocates 15 padded rows plus one row, and indexes rows by the stride.
    PrimFunc flat = flattenBuffers(lb);
    auto allocs = allocations(flat);
    QVERIFY2(allocs.count("A_global"), printFunc(flat).c_str());
    QCOMPARE(allocs["A_global"], std::vector<int64_t>{15 * stride + 16});
    std::string text = printFunc(flat);
    if (stride != 16) QVERIFY2(text.find(" * " + std::to_string(stride)) != std::string::npos, text.c_str());
    QVERIFY2(text.find("buffer_dim_align") == std::string::npos, text.c_str());
    // Same results as the unscheduled function, after each step and after the whole pipeline.
    EXPECT_SAME_MEANING(f, flat);
    PassContext ctx;
    PrimFunc lowered = lower(s, ctx);
    EXPECT_SAME_MEANING(f, lowered);
  }

  void innerAxisAndComputeAt() {
    // A 3-D copy aligned on its middle axis, and a copy moved under a loop (compact-buffers
    // shrinks it first; the alignment applies to the compacted shape).
    PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("batch_matmul:B=2,M=6,N=10,K=7"));
    PrimFunc s3 = scheduled("batch_matmul:B=2,M=6,N=10,K=7",
                            "b = sch.get_block(\"C\")\n"
                            "a = sch.cache_read(b, 1, \"global\")\n"
                            "sch.storage_align(a, 0, axis=1, factor=4, offset=1)\n");
    PrimFunc flat3 = flattenBuffers(lowerBlocks(s3));
    // B is (2, 7, 10): row stride 10, the middle axis's stride 10 -> 13 (13 % 4 == 1), the outer
    // stride 7 * 13 = 91; 1 * 91 + 6 * 13 + 9 + 1 = 179 elements.
    QCOMPARE(allocations(flat3)["B_global"], std::vector<int64_t>{179});
    EXPECT_SAME_MEANING(f, flat3);
    PassContext ctx;
    EXPECT_SAME_MEANING(f, lower(s3, ctx));

    PrimFunc m = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=8,N=12,K=6"));
    PrimFunc sc = scheduled("matmul:M=8,N=12,K=6",
                            "b = sch.get_block(\"C\")\n"
                            "i, j, k = sch.get_loops(b)\n"
                            "a = sch.cache_read(b, 1, \"global\")\n"
                            "sch.compute_at(a, i)\n"
                            "sch.storage_align(a, 0, axis=0, factor=16, offset=3)\n");
    PassContext ctx2;
    EXPECT_SAME_MEANING(m, lower(sc, ctx2));
  }
};

QTEST_APPLESS_MAIN(TestStorageAlign)
#include "test_storage_align.moc"
