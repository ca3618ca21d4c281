// get_block, get_loops, get_child_blocks, get_producers, get_consumers.
#include "ScheduleTestUtil.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {
std::vector<std::string> blockNames(Schedule& sch, const std::vector<BlockRV>& rvs) {
  std::vector<std::string> out;
  for (auto& rv : rvs)
    out.push_back(sch.get(rv)->name);
  return out;
}
std::vector<std::string> loopNames(Schedule& sch, const std::vector<LoopRV>& rvs) {
  std::vector<std::string> out;
  for (auto& rv : rvs)
    out.push_back(sch.get(rv)->loopVar->name);
  return out;
}
using Names = std::vector<std::string>;

const char* kTwoBlocksPerLoop = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("X"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + T.float32(1)
        with T.block("X"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi])
            T.writes(C[vi])
            C[vi] = B[vi] * T.float32(2)
)";
} // namespace

class TestGetBlockLoop : public QObject {
  Q_OBJECT
private slots:
  void loopsOfConv() {
    Schedule sch(workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3"));
    BlockRV conv = getBlock(sch, "conv2d_nchw");
    QCOMPARE(loopNames(sch, getLoops(sch, conv)),
             (Names{"nn", "ff", "yy", "xx", "rc", "ry", "rx"}));
    BlockRV pad = getBlock(sch, "pad_temp");
    QCOMPARE(loopNames(sch, getLoops(sch, pad)), (Names{"i0", "i1", "i2", "i3"}));
    QCOMPARE(sch.trace().str(), std::string("b0 = sch.get_block(\"conv2d_nchw\")\n"
                                            "l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(b0)\n"
                                            "b8 = sch.get_block(\"pad_temp\")\n"
                                            "l9, l10, l11, l12 = sch.get_loops(b8)\n"));
  }
  void childBlocks() {
    Schedule sch(workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3"));
    BlockRV root = getBlock(sch, "root");
    QCOMPARE(blockNames(sch, getChildBlocks(sch, root)), (Names{"pad_temp", "conv2d_nchw"}));
    auto loops = getLoops(sch, getBlock(sch, "conv2d_nchw"));
    QCOMPARE(blockNames(sch, getChildBlocks(sch, loops[3])), (Names{"conv2d_nchw"}));
    QCOMPARE(blockNames(sch, getChildBlocks(sch, getBlock(sch, "conv2d_nchw"))), Names{});
    ScriptResult r =
        runScript(sch, "r = sch.get_block(\"root\")\na, c = sch.get_child_blocks(r)\n");
    QVERIFY2(r.ok, r.message.c_str());
  }
  void producersConsumers() {
    Schedule sch(workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3"));
    BlockRV conv = getBlock(sch, "conv2d_nchw");
    BlockRV pad = getBlock(sch, "pad_temp");
    QCOMPARE(blockNames(sch, getProducers(sch, conv)), (Names{"pad_temp"}));
    QCOMPARE(blockNames(sch, getConsumers(sch, pad)), (Names{"conv2d_nchw"}));
    QCOMPARE(blockNames(sch, getProducers(sch, pad)), Names{});
    QCOMPARE(blockNames(sch, getConsumers(sch, conv)), Names{});
    QVERIFY(sch.trace().str().find("b2, = sch.get_producers(b0)") != std::string::npos);
  }
  void notFound() {
    auto [kind, msg] = scriptError(workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3"),
                                   "b = sch.get_block(\"conv\")\n");
    QCOMPARE(QString::fromStdString(kind), QString("BlockNotFoundError"));
    QCOMPARE(QString::fromStdString(msg),
             QString("s.py:1:9: error: no block named 'conv' in function 'main' (blocks: "
                     "'pad_temp', 'conv2d_nchw')"));
  }
  void otherFunction() {
    auto [kind, msg] = scriptError(workload("matmul:M=4,N=4,K=4"),
                                   "b = sch.get_block(\"C\", func_name=\"other\")\n");
    QCOMPARE(QString::fromStdString(kind), QString("BlockNotFoundError"));
    QCOMPARE(
        QString::fromStdString(msg),
        QString("s.py:1:9: error: get_block: the schedule works on function 'main', not 'other'"));
    auto [kind2, msg2] = scriptError(workload("matmul:M=4,N=4,K=4"),
                                     "b = sch.get_block(\"C\", func_name=\"main\")\n");
    QCOMPARE(QString::fromStdString(kind2), QString(""));
  }
  void singleOutputListUnpacks() {
    Schedule sch(workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3"));
    ScriptResult r = runScript(
        sch,
        "b = sch.get_block(\"conv2d_nchw\")\np, = sch.get_producers(b)\nc, = sch.get_consumers(p)\n"
        "sch.annotate(c, \"seen\", 1)\n");
    QVERIFY2(r.ok, r.message.c_str());
    std::string t = sch.trace().str();
    QVERIFY2(t.find("b1, = sch.get_producers(b0)\nb2, = sch.get_consumers(b1)\n") !=
                 std::string::npos,
             t.c_str());
    Schedule again(workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3"));
    QVERIFY(runScript(again, t).ok);
    QVERIFY(structuralEqual(again.func(), sch.func()));
  }
  void ambiguousName() {
    Schedule sch(parseFunc(kTwoBlocksPerLoop));
    try {
      getBlock(sch, "X");
      QFAIL("no error");
    } catch (const BlockNotFoundError& e) {
      QCOMPARE(QString(e.what()), QString("2 blocks are named 'X'; get_block needs a unique name"));
      // Both blocks are underlined in the detailed message.
      std::string d = e.detailedMessage();
      size_t first = d.find("^^^^");
      QVERIFY(first != std::string::npos && d.find("^^^^", first + 20) != std::string::npos);
    }
    QVERIFY(sch.trace().insts.empty());
  }
  void loopsStopAtEnclosingBlock() {
    // Blocks nested in a block: get_loops returns only the loops inside the enclosing block.
    Schedule sch(workload("matmul:M=4,N=4,K=4"));
    BlockRV c = getBlock(sch, "C");
    QCOMPARE(getLoops(sch, c).size(), size_t(3));
    QCOMPARE(getLoops(sch, getBlock(sch, "root")).size(), size_t(0));
  }
};

QTEST_APPLESS_MAIN(TestGetBlockLoop)
#include "test_get_block_loop.moc"
