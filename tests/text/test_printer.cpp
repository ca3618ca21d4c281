// Golden-text tests of the TVMScript printer: hand-built IR against the exact expected text.
#include <QtTest>

#include <cmath>
#include <limits>

#include "core/tir/Intrinsics.h"
#include "core/tir/Op.h"
#include "core/tir/Printer.h"
#include "tests/text/TextFixtures.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {
const DataType f32 = DataType::Float(32);
const DataType i64 = DataType::Int(64);

#define CHECK_TEXT(actual, expected) QCOMPARE(QString::fromStdString(actual), QString::fromStdString(expected))

/// The text of a function "main(A: float32[16])" with `body`, as printed after the header lines.
Stmt rootOf(Stmt body) {
  auto* root = new BlockNode();
  root->name = "root";
  root->body = std::move(body);
  return blockRealize({}, Expr(), Block(root));
}

std::string bodyText(const std::string& body, const std::string& params = "A: T.Buffer((16,), \"float32\")") {
  return "# from tvm.script import tir as T\n\n@T.prim_func\ndef main(" + params +
         "):\n    T.func_attr({\"global_symbol\": \"main\"})\n" + body;
}
}  // namespace

class TestPrinter : public QObject {
  Q_OBJECT
private slots:
  void matmulMatchesTvm() {
    CHECK_TEXT(printFunc(matmulFunc()),
               "# from tvm.script import tir as T\n"
               "\n"
               "@T.prim_func\n"
               "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
               "    T.func_attr({\"global_symbol\": \"main\", \"tir.noalias\": T.bool(True)})\n"
               "    # with T.block(\"root\"):\n"
               "    for i, j, k in T.grid(64, 64, 64):\n"
               "        with T.block(\"C\"):\n"
               "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
               "            T.reads(A[vi, vk], B[vk, vj])\n"
               "            T.writes(C[vi, vj])\n"
               "            with T.init():\n"
               "                C[vi, vj] = T.float32(0)\n"
               "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
  }

  void integerImmediates() {
    CHECK_TEXT(printExpr(3), "3");
    CHECK_TEXT(printExpr(-3), "-3");
    CHECK_TEXT(printExpr(intImm(i64, 3)), "T.int64(3)");
    CHECK_TEXT(printExpr(intImm(DataType::Int(8), -7)), "T.int8(-7)");
    CHECK_TEXT(printExpr(intImm(DataType::UInt(8), 255)), "T.uint8(255)");
    CHECK_TEXT(printExpr(intImm(DataType::Int(16), 2)), "T.int16(2)");
    CHECK_TEXT(printExpr(boolImm(true)), "True");
    CHECK_TEXT(printExpr(boolImm(false)), "False");
  }

  void floatImmediates() {
    CHECK_TEXT(printExpr(floatImm(f32, 0.5)), "T.float32(0.5)");
    CHECK_TEXT(printExpr(floatImm(f32, 0)), "T.float32(0)");
    CHECK_TEXT(printExpr(floatImm(f32, 0.1f)), "T.float32(0.10000000149011612)");
    CHECK_TEXT(printExpr(floatImm(DataType::Float(64), 0.1)), "T.float64(0.1)");
    CHECK_TEXT(printExpr(floatImm(DataType::Float(16), -1.5)), "T.float16(-1.5)");
    CHECK_TEXT(printExpr(floatImm(f32, 1e20)), "T.float32(1e+20)");
    CHECK_TEXT(printExpr(floatImm(f32, std::numeric_limits<double>::infinity())), "T.float32(\"inf\")");
    CHECK_TEXT(printExpr(floatImm(f32, -std::numeric_limits<double>::infinity())), "T.float32(\"-inf\")");
    CHECK_TEXT(printExpr(floatImm(f32, std::nan(""))), "T.float32(\"nan\")");
    CHECK_TEXT(printExpr(floatImm(DataType::BFloat16(), 2)), "T.bfloat16(2)");
  }

  void formatFloatRoundTrips() {
    for (double v : {0.1, 1.0 / 3, 1e-300, 123456789.123, 5e-324, 1.7976931348623157e308, -2.5e-7}) {
      std::string s = formatFloat(v);
      QCOMPARE(std::strtod(s.c_str(), nullptr), v);
    }
  }

  void stringsAreEscaped() {
    CHECK_TEXT(printExpr(stringImm("a\"b\\c\nd")), "\"a\\\"b\\\\c\\nd\"");
  }

  void arithmeticOperators() {
    Var a = makeVar("a"), b = makeVar("b");
    CHECK_TEXT(printExpr(Expr(a) + b), "a + b");
    CHECK_TEXT(printExpr(Expr(a) - b), "a - b");
    CHECK_TEXT(printExpr(Expr(a) * b), "a * b");
    CHECK_TEXT(printExpr(floordiv(a, b)), "a // b");
    CHECK_TEXT(printExpr(floormod(a, b)), "a % b");
    CHECK_TEXT(printExpr(truncdiv(a, b)), "T.truncdiv(a, b)");
    CHECK_TEXT(printExpr(truncmod(a, b)), "T.truncmod(a, b)");
    CHECK_TEXT(printExpr(min(a, b)), "T.min(a, b)");
    CHECK_TEXT(printExpr(max(a, 4)), "T.max(a, 4)");
    Var x = makeVar("x", f32);
    CHECK_TEXT(printExpr(Expr(x) / floatImm(f32, 2)), "x / T.float32(2)");
    CHECK_TEXT(printExpr(-Expr(a)), "0 - a");
  }

  void comparisonsAndLogic() {
    Var a = makeVar("a"), b = makeVar("b");
    CHECK_TEXT(printExpr(Expr(a) < b), "a < b");
    CHECK_TEXT(printExpr(Expr(a) <= b), "a <= b");
    CHECK_TEXT(printExpr(Expr(a) > b), "a > b");
    CHECK_TEXT(printExpr(Expr(a) >= b), "a >= b");
    CHECK_TEXT(printExpr(eq(a, b)), "a == b");
    CHECK_TEXT(printExpr(ne(a, b)), "a != b");
    CHECK_TEXT(printExpr((Expr(a) < b) && (Expr(b) < 4)), "a < b and b < 4");
    CHECK_TEXT(printExpr((Expr(a) < b) || !(Expr(b) < 4)), "a < b or not b < 4");
    CHECK_TEXT(printExpr(eq(Expr(a) < b, boolImm(true))), "(a < b) == True");
  }

  void precedenceParenthesizes() {
    Var a = makeVar("a"), b = makeVar("b"), c = makeVar("c");
    CHECK_TEXT(printExpr((Expr(a) + b) * c), "(a + b) * c");
    CHECK_TEXT(printExpr(Expr(a) - (Expr(b) - c)), "a - (b - c)");
    CHECK_TEXT(printExpr((Expr(a) - b) - c), "a - b - c");
    CHECK_TEXT(printExpr(floordiv(a, Expr(b) * c)), "a // (b * c)");
    CHECK_TEXT(printExpr(Expr(a) * -2), "a * -2");
    CHECK_TEXT(printExpr(((Expr(a) < b) || (Expr(b) < c)) && (Expr(c) < a)), "(a < b or b < c) and c < a");
  }

  void castSelectLet() {
    Var a = makeVar("a"), x = makeVar("x");
    CHECK_TEXT(printExpr(cast(f32, a)), "T.Cast(\"float32\", a)");
    CHECK_TEXT(printExpr(select(Expr(a) < 0, 0, a)), "T.Select(a < 0, 0, a)");
    CHECK_TEXT(printExpr(let(x, Expr(a) + 1, Expr(x) * x)), "T.Let(x, a + 1, x * x)");
  }

  void vectors() {
    Buffer A = makeBuffer("A", f32, {64});
    CHECK_TEXT(printExpr(ramp(0, 1, 8)), "T.Ramp(0, 1, 8)");
    CHECK_TEXT(printExpr(broadcast(floatImm(f32, 1), 4)), "T.Broadcast(T.float32(1), 4)");
    CHECK_TEXT(printExpr(bufferLoad(A, {ramp(8, 2, 4)})), "A[T.Ramp(8, 2, 4)]");
    QCOMPARE(bufferLoad(A, {ramp(8, 2, 4)}).dtype(), DataType::Float(32, 4));
  }

  void everyIntrinsicPrintsAsTCall() {
    Var x = makeVar("x", f32), y = makeVar("y", f32), c = makeVar("c", DataType::Bool());
    for (const std::string& name : intrinsicNames()) {
      const Intrinsic* in = findIntrinsic(name);
      Expr e;
      std::string want;
      if (name == "if_then_else") {
        e = ifThenElse(c, x, y);
        want = "T.if_then_else(c, x, y)";
      } else if (in->numArgs == 2) {
        e = call(name, {x, y});
        want = "T." + name + "(x, y)";
      } else {
        e = call(name, {x});
        want = "T." + name + "(x)";
      }
      CHECK_TEXT(printExpr(e), want);
    }
  }

  void callIntrinFallback() {
    Var x = makeVar("x", f32);
    CHECK_TEXT(printExpr(call(DataType::Int(32), "exp", {x})), "T.call_intrin(\"int32\", \"exp\", x)");
    CHECK_TEXT(printExpr(call(f32, "my_op", {x, 2})), "T.call_intrin(\"float32\", \"my_op\", x, 2)");
  }

  void loadsAndZeroDimBuffers() {
    Buffer A = makeBuffer("A", f32, {4, 4}), S = makeBuffer("S", f32, {});
    CHECK_TEXT(printExpr(bufferLoad(A, {1, 2})), "A[1, 2]");
    CHECK_TEXT(printExpr(bufferLoad(S, {})), "S[()]");
  }

  void storeAndEvaluate() {
    Buffer A = makeBuffer("A", f32, {16});
    CHECK_TEXT(printStmt(bufferStore(A, floatImm(f32, 1), {3})), "A[3] = T.float32(1)\n");
    CHECK_TEXT(printStmt(evaluate(0)), "T.evaluate(0)\n");
  }

  void letStmtFlatAndWith() {
    Buffer A = makeBuffer("A", f32, {16});
    Var x = makeVar("x"), y = makeVar("y", i64);
    Stmt flat = letStmt(x, 4, bufferStore(A, floatImm(f32, 1), {x}));
    CHECK_TEXT(printStmt(flat), "x: T.int32 = 4\nA[x] = T.float32(1)\n");
    Stmt notLast = seq({letStmt(y, intImm(i64, 2), evaluate(y)), evaluate(1)});
    CHECK_TEXT(printStmt(notLast), "with T.LetStmt(T.int64(2)) as y:\n    T.evaluate(y)\nT.evaluate(1)\n");
  }

  void attrAndAssert() {
    Var v = makeVar("v");
    Stmt s = attrStmt(Expr(), "pragma_x", 2, assertStmt(Expr(v) > 0, "v must be positive", evaluate(v)));
    CHECK_TEXT(printStmt(s), "with T.attr(None, \"pragma_x\", 2):\n    assert v > 0, \"v must be positive\"\n"
                             "    T.evaluate(v)\n");
    Stmt withForm = seq({assertStmt(boolImm(true), "m", evaluate(0)), evaluate(1)});
    CHECK_TEXT(printStmt(withForm), "with T.Assert(True, \"m\"):\n    T.evaluate(0)\nT.evaluate(1)\n");
  }

  void allocateAndDeclBuffer() {
    Var data = makeVar("buf", DataType::Handle());
    Buffer B = makeBuffer("B", f32, {32});
    auto* n = new BufferNode(*B.get());
    n->data = data;
    B = Buffer(n);
    Stmt s = allocate(data, f32, {32}, declBuffer(B, bufferStore(B, floatImm(f32, 0), {0})), "shared");
    CHECK_TEXT(printStmt(s), "buf = T.allocate([32], \"float32\", \"shared\")\n"
                             "B = T.decl_buffer((32,), \"float32\", data=buf)\n"
                             "B[0] = T.float32(0)\n");
    Stmt inSeq = seq({allocate(data, f32, {32}, evaluate(0)), evaluate(1)});
    CHECK_TEXT(printStmt(inSeq), "with T.allocate([32], \"float32\", \"global\") as buf:\n    T.evaluate(0)\n"
                                 "T.evaluate(1)\n");
  }

  void ifElseAndWhile() {
    Var i = makeVar("i");
    Stmt s = ifThen(Expr(i) < 2, evaluate(1), ifThen(Expr(i) < 4, evaluate(2)));
    CHECK_TEXT(printStmt(s), "if i < 2:\n    T.evaluate(1)\nelse:\n    if i < 4:\n        T.evaluate(2)\n");
    CHECK_TEXT(printStmt(whileLoop(Expr(i) < 3, evaluate(i))), "while i < 3:\n    T.evaluate(i)\n");
  }

  void loopKinds() {
    Var i = makeVar("i");
    auto loop = [&](ForKind k, Expr min, std::string tag = {}, Annotations ann = {}) {
      return printStmt(forLoop(i, min, 8, k, evaluate(i), tag, ann));
    };
    CHECK_TEXT(loop(ForKind::Serial, 0), "for i in range(8):\n    T.evaluate(i)\n");
    CHECK_TEXT(loop(ForKind::Serial, 2), "for i in T.serial(2, 10):\n    T.evaluate(i)\n");
    CHECK_TEXT(loop(ForKind::Parallel, 0), "for i in T.parallel(8):\n    T.evaluate(i)\n");
    CHECK_TEXT(loop(ForKind::Vectorized, 0), "for i in T.vectorized(8):\n    T.evaluate(i)\n");
    CHECK_TEXT(loop(ForKind::Unrolled, 0), "for i in T.unroll(8):\n    T.evaluate(i)\n");
    CHECK_TEXT(loop(ForKind::ThreadBinding, 0, "threadIdx.x"),
               "for i in T.thread_binding(8, thread=\"threadIdx.x\"):\n    T.evaluate(i)\n");
    CHECK_TEXT(loop(ForKind::Serial, 0, {}, {{"pragma_auto_unroll_max_step", 16}}),
               "for i in T.serial(8, annotations={\"pragma_auto_unroll_max_step\": 16}):\n    T.evaluate(i)\n");
    Var n = makeVar("n");
    CHECK_TEXT(printStmt(forLoop(i, n, 4, ForKind::Serial, evaluate(i))), "for i in T.serial(n, n + 4):\n    T.evaluate(i)\n");
    Var j = makeVar("j", i64);
    CHECK_TEXT(printStmt(forLoop(j, intImm(i64, 0), intImm(i64, 4), ForKind::Serial, evaluate(j))),
               "for j in range(T.int64(4)):\n    T.evaluate(j)\n");
  }

  void gridMergesIndependentLoops() {
    Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k");
    Stmt dep = forLoop(i, 0, 4, ForKind::Serial,
                       forLoop(j, 0, 4, ForKind::Serial, forLoop(k, 0, Expr(i) + 1, ForKind::Serial, evaluate(k))));
    CHECK_TEXT(printStmt(dep), "for i, j in T.grid(4, 4):\n    for k in range(i + 1):\n        T.evaluate(k)\n");
  }

  void blockWithoutRemap() {
    PrimFunc f = funcWith({{16}}, [](const std::vector<Buffer>& b) {
      Var i = makeVar("i"), vi = makeVar("vi");
      auto* blk = new BlockNode();
      blk->name = "B";
      blk->iterVars = {IterVar(vi, Range(0, 8), IterType::DataPar)};
      blk->reads = {BufferRegion(b[0], {Range(Expr(vi) * 2, 2)})};
      blk->writes = {BufferRegion::full(b[0])};
      blk->annotations = {{"meta", stringImm("x")}};
      blk->body = bufferStore(b[0], floatImm(f32, 1), {Expr(vi) * 2});
      Stmt br = blockRealize({Expr(i) + 1}, Expr(i) < 7, Block(blk));
      auto* root = new BlockNode();
      root->name = "root";
      root->body = forLoop(i, 0, 8, ForKind::Serial, br);
      return blockRealize({}, Expr(), Block(root));
    });
    CHECK_TEXT(printFunc(f), bodyText("    # with T.block(\"root\"):\n"
                                      "    for i in range(8):\n"
                                      "        with T.block(\"B\"):\n"
                                      "            vi = T.axis.spatial(8, i + 1)\n"
                                      "            T.where(i < 7)\n"
                                      "            T.reads(A[vi * 2:vi * 2 + 2])\n"
                                      "            T.writes(A[0:16])\n"
                                      "            T.block_attr({\"meta\": \"x\"})\n"
                                      "            A[vi * 2] = T.float32(1)\n"));
  }

  void axisKindsAndDomains() {
    PrimFunc f = funcWith({{16}}, [](const std::vector<Buffer>& b) {
      Var i = makeVar("i"), v0 = makeVar("v0"), v1 = makeVar("v1"), v2 = makeVar("v2");
      auto* blk = new BlockNode();
      blk->name = "S";
      blk->iterVars = {IterVar(v0, Range(2, 4), IterType::Ordered), IterVar(v1, Range(0, 16), IterType::Opaque),
                       IterVar(v2, Range(0, 16), IterType::CommReduce)};
      blk->writes = {BufferRegion(b[0], {Range(v1, 1)})};
      blk->body = bufferStore(b[0], floatImm(f32, 0), {v1});
      Stmt br = blockRealize({Expr(i) + 2, i, i}, Expr(), Block(blk));
      auto* root = new BlockNode();
      root->name = "root";
      root->body = forLoop(i, 0, 4, ForKind::Serial, br);
      return blockRealize({}, Expr(), Block(root));
    });
    CHECK_TEXT(printFunc(f), bodyText("    # with T.block(\"root\"):\n"
                                      "    for i in range(4):\n"
                                      "        with T.block(\"S\"):\n"
                                      "            v0 = T.axis.scan((2, 6), i + 2)\n"
                                      "            v1 = T.axis.opaque(16, i)\n"
                                      "            v2 = T.axis.reduce(16, i)\n"
                                      "            T.reads()\n"
                                      "            T.writes(A[v1])\n"
                                      "            A[v1] = T.float32(0)\n"));
  }

  void remapRunsLikeTvm() {
    PrimFunc f = funcWith({{8, 8}}, [](const std::vector<Buffer>& b) {
      Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k");
      Var vi = makeVar("vi"), vx = makeVar("vx"), vk = makeVar("vk"), vj = makeVar("vj");
      auto* blk = new BlockNode();
      blk->name = "mix";
      blk->iterVars = {IterVar(vi, Range(0, 8), IterType::DataPar), IterVar(vx, Range(0, 8), IterType::DataPar),
                       IterVar(vk, Range(0, 2), IterType::CommReduce), IterVar(vj, Range(0, 8), IterType::DataPar)};
      blk->writes = {BufferRegion(b[0], {Range(vi, 1), Range(vj, 1)})};
      blk->body = bufferStore(b[0], floatImm(f32, 0), {vi, vj});
      Stmt br = blockRealize({i, 7 - Expr(j), k, j}, Expr(), Block(blk));
      Stmt loops = forLoop(i, 0, 8, ForKind::Serial,
                           forLoop(j, 0, 8, ForKind::Serial, forLoop(k, 0, 2, ForKind::Unrolled, br)));
      return rootOf(loops);
    });
    CHECK_TEXT(printFunc(f), bodyText("    # with T.block(\"root\"):\n"
                                      "    for i, j in T.grid(8, 8):\n"
                                      "        for k in T.unroll(2):\n"
                                      "            with T.block(\"mix\"):\n"
                                      "                vi = T.axis.remap(\"S\", [i])\n"
                                      "                vx = T.axis.spatial(8, 7 - j)\n"
                                      "                vk, vj = T.axis.remap(\"RS\", [k, j])\n"
                                      "                T.reads()\n"
                                      "                T.writes(A[vi, vj])\n"
                                      "                A[vi, vj] = T.float32(0)\n",
                                      "A: T.Buffer((8, 8), \"float32\")"));
  }

  void explicitRootWithAllocBuffer() {
    PrimFunc f = funcWith({{16}}, [](const std::vector<Buffer>& b) {
      Buffer L = makeBuffer("A_local", f32, {16}, "local");
      Var i = makeVar("i");
      auto* root = new BlockNode();
      root->name = "root";
      root->allocBuffers = {L};
      auto* blk = new BlockNode();
      blk->name = "copy";
      Var vi = makeVar("vi");
      blk->iterVars = {IterVar(vi, Range(0, 16), IterType::DataPar)};
      blk->reads = {BufferRegion(b[0], {Range(vi, 1)})};
      blk->writes = {BufferRegion(L, {Range(vi, 1)})};
      blk->body = bufferStore(L, bufferLoad(b[0], {vi}), {vi});
      root->body = forLoop(i, 0, 16, ForKind::Serial, blockRealize({i}, Expr(), Block(blk)));
      return blockRealize({}, Expr(), Block(root));
    });
    CHECK_TEXT(printFunc(f), bodyText("    with T.block(\"root\"):\n"
                                      "        A_local = T.alloc_buffer((16,), \"float32\", scope=\"local\")\n"
                                      "        for i in range(16):\n"
                                      "            with T.block(\"copy\"):\n"
                                      "                vi = T.axis.remap(\"S\", [i])\n"
                                      "                T.reads(A[vi])\n"
                                      "                T.writes(A_local[vi])\n"
                                      "                A_local[vi] = A[vi]\n"));
  }

  void bufferKeywordArguments() {
    Var n = makeVar("n");
    Buffer A = makeBuffer("A", DataType::Int(8), {n, 8}, "shared");
    auto* an = new BufferNode(*A.get());
    an->strides = {16, 1};
    an->elemOffset = intImm(DataType::Int(32), 4);
    an->alignment = 16;
    A = Buffer(an);
    Var pa = makeVar("A", DataType::Handle());
    PrimFunc f = makePrimFunc("k", {pa, n}, {{pa, A}}, bufferStore(A, intImm(DataType::Int(8), 1), {0, 0}));
    CHECK_TEXT(printFunc(f),
               "# from tvm.script import tir as T\n\n@T.prim_func\n"
               "def k(A: T.Buffer((n, 8), \"int8\", strides=(16, 1), elem_offset=4, scope=\"shared\", align=16), n: T.int32):\n"
               "    T.func_attr({\"global_symbol\": \"k\"})\n"
               "    A[0, 0] = T.int8(1)\n");
  }

  void symbolicShapeDeclaresFreeVar() {
    Var m = makeVar("m");
    Buffer A = makeBuffer("A", f32, {m});
    Var pa = makeVar("A", DataType::Handle());
    Var i = makeVar("i");
    PrimFunc f = makePrimFunc("main", {pa}, {{pa, A}},
                              forLoop(i, 0, m, ForKind::Serial, bufferStore(A, floatImm(f32, 0), {i})));
    CHECK_TEXT(printFunc(f), bodyText("    m = T.int32()\n"
                                      "    for i in range(m):\n"
                                      "        A[i] = T.float32(0)\n",
                                      "A: T.Buffer((m,), \"float32\")"));
  }

  void duplicateNamesAreRenamed() {
    Var a = makeVar("i"), b = makeVar("i"), c = makeVar("");
    CHECK_TEXT(printExpr(Expr(a) + b + c), "i + i_1 + v");
    Var kw = makeVar("for"), dotted = makeVar("threadIdx.x");
    CHECK_TEXT(printExpr(Expr(kw) + dotted), "for_1 + threadIdx_x");
  }

  void reboundVariablesGetFreshNames() {
    // Non-SSA IR (one loop var bound by two loops) prints each binding under its own name, so
    // the text parses back to text-identical IR.
    Buffer A = makeBuffer("A", f32, {4});
    Var i = makeVar("i");
    Stmt s = seq({forLoop(i, 0, 2, ForKind::Serial, bufferStore(A, floatImm(f32, 0), {i})),
                  forLoop(i, 2, 2, ForKind::Serial, bufferStore(A, floatImm(f32, 1), {i}))});
    CHECK_TEXT(printStmt(s), "for i in range(2):\n    A[i] = T.float32(0)\nfor i_1 in T.serial(2, 4):\n"
                             "    A[i_1] = T.float32(1)\n");
  }

  void emptyBodiesPrintPass() {
    Var i = makeVar("i");
    CHECK_TEXT(printStmt(forLoop(i, 0, 2, ForKind::Serial, seq({}))), "for i in range(2):\n    pass\n");
  }

  void moduleOfTwoFunctions() {
    IRModule m;
    m.add(funcWith({{4}}, [](auto& b) { return bufferStore(b[0], floatImm(f32, 1), {0}); }));
    PrimFunc g = makePrimFunc("other", {}, {}, evaluate(0));
    m.add(g);
    CHECK_TEXT(printModule(m), "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n"
                               "@I.ir_module\nclass Module:\n"
                               "    @T.prim_func\n    def main(A: T.Buffer((4,), \"float32\")):\n"
                               "        T.func_attr({\"global_symbol\": \"main\"})\n"
                               "        A[0] = T.float32(1)\n\n"
                               "    @T.prim_func\n    def other():\n"
                               "        T.func_attr({\"global_symbol\": \"other\"})\n"
                               "        T.evaluate(0)\n");
  }

  void lineMapCoversStatements() {
    PrimFunc f = matmulFunc();
    PrintResult r = printWithMap(f);
    auto* root = f->body.as<BlockRealizeNode>();
    Stmt i = root->block->body;
    Stmt k = i.as<ForNode>()->body.as<ForNode>()->body;
    Stmt realize = k.as<ForNode>()->body;
    Stmt update = realize.as<BlockRealizeNode>()->block->body;
    Stmt init = realize.as<BlockRealizeNode>()->block->init;
    QCOMPARE(r.linesOf(i).first, 7);
    QCOMPARE(r.linesOf(i).last, 14);
    Stmt j = i.as<ForNode>()->body;
    QCOMPARE(r.linesOf(j).first, 7);  // the T.grid line stands for all three loops
    QCOMPARE(r.linesOf(j).last, 14);
    QCOMPARE(r.linesOf(k).first, 7);
    QCOMPARE(r.linesOf(realize).first, 8);
    QCOMPARE(r.linesOf(realize).last, 14);
    QCOMPARE(r.linesOf(Stmt(realize.as<BlockRealizeNode>()->block.get())).first, 8);
    QCOMPARE(r.linesOf(init).first, 13);
    QCOMPARE(r.linesOf(update).first, 14);
    QCOMPARE(r.linesOf(update).last, 14);
    QVERIFY(!r.linesOf(evaluate(0)).valid());
    // Line numbers point at the text they name.
    QStringList lines = QString::fromStdString(r.text).split('\n');
    QVERIFY(lines[r.linesOf(update).first - 1].trimmed().startsWith("C[vi, vj] = C[vi, vj] +"));
  }

  void lineMapShiftsForFreeVarDeclarations() {
    Var m = makeVar("m"), i = makeVar("i");
    Buffer A = makeBuffer("A", f32, {16});
    Var pa = makeVar("A", DataType::Handle());
    Stmt store = bufferStore(A, floatImm(f32, 0), {i});
    Stmt loop = forLoop(i, 0, m, ForKind::Serial, store);
    PrimFunc f = makePrimFunc("main", {pa}, {{pa, A}}, loop);
    PrintResult r = printWithMap(f);
    QCOMPARE(r.linesOf(loop).first, 7);
    QCOMPARE(r.linesOf(store).first, 8);
  }
};

QTEST_APPLESS_MAIN(TestPrinter)
#include "test_printer.moc"
