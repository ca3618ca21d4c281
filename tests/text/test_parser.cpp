// Parser tests: print -> parse round trips (text fixed point and structural equality), spans,
// TVM-style input, and expected errors with their line:column.
#include <QtTest>

#include <cmath>
#include <limits>
#include <sstream>

#include "core/support/Error.h"
#include "core/tir/Intrinsics.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/topi/Workloads.h"
#include "tests/text/TextFixtures.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {
const DataType f32 = DataType::Float(32);
const DataType i64 = DataType::Int(64);

#define TRY_PARSE(stmt)                                                                         \
  try {                                                                                          \
    stmt;                                                                                        \
  } catch (const loom::Error& e) {                                                              \
    QFAIL(e.formatted().c_str());                                                                \
  }

/// print -> parse -> print is a fixed point and the parsed function equals the original.
#define CHECK_ROUND_TRIP(func)                                                                  \
  do {                                                                                           \
    PrimFunc f_ = (func);                                                                        \
    std::string t_ = printFunc(f_);                                                              \
    PrimFunc g_;                                                                                 \
    TRY_PARSE(g_ = parseFunc(t_, "roundtrip.py"));                                               \
    QCOMPARE(QString::fromStdString(printFunc(g_)), QString::fromStdString(t_));                \
    QVERIFY2(structuralEqual(f_, g_), (structuralDiff(f_, g_) + "\n" + t_).c_str());            \
  } while (0)

struct ErrorCase {
  std::string text;
  int line, column;
  std::string message;
};

const char* kHead = "@T.prim_func\ndef main(A: T.Buffer((16,), \"float32\")):\n";

Stmt rootOf(Stmt body) {
  auto* root = new BlockNode();
  root->name = "root";
  root->body = std::move(body);
  return blockRealize({}, Expr(), Block(root));
}
}  // namespace

class TestParser : public QObject {
  Q_OBJECT
private slots:
  // --- round trips ----------------------------------------------------------------------
  void roundTripMatmul() { CHECK_ROUND_TRIP(matmulFunc()); }
  void roundTripMatmulSymbolicExtent() { CHECK_ROUND_TRIP(matmulFunc(7)); }
  void roundTripKitchenSink() { CHECK_ROUND_TRIP(kitchenSinkFunc()); }

  void roundTripBlockForms() {
    CHECK_ROUND_TRIP(funcWith({{16}, {16}}, [](const std::vector<Buffer>& b) {
      Var i = makeVar("i"), vi = makeVar("vi"), v2 = makeVar("v2"), v3 = makeVar("v3");
      auto* blk = new BlockNode();
      blk->name = "B";
      blk->iterVars = {IterVar(vi, Range(0, 8), IterType::DataPar), IterVar(v2, Range(2, 4), IterType::Ordered),
                       IterVar(v3, Range(0, 16), IterType::Opaque)};
      blk->reads = {BufferRegion(b[0], {Range(Expr(vi) * 2, 2)}), BufferRegion(b[1], {Range(3, 5)})};
      blk->writes = {BufferRegion::full(b[0])};
      blk->annotations = {{"meta", stringImm("x")}, {"n", 3}, {"f", floatImm(f32, 0.25)}};
      Buffer L = makeBuffer("L", f32, {2}, "local");
      blk->allocBuffers = {L};
      blk->body = seq({bufferStore(L, bufferLoad(b[1], {v3}), {0}), bufferStore(b[0], bufferLoad(L, {0}), {Expr(vi) * 2})});
      Stmt br = blockRealize({Expr(i) + 1, Expr(i) % 4 + 2, i}, Expr(i) < 7, Block(blk));
      return rootOf(forLoop(i, 0, 8, ForKind::Serial, br));
    }));
  }

  void roundTripExplicitRootAndNoRealize() {
    CHECK_ROUND_TRIP(funcWith({{16}}, [](const std::vector<Buffer>& b) {
      auto* inner = new BlockNode();
      inner->name = "opaque";
      Var vi = makeVar("vi");
      inner->iterVars = {IterVar(vi, Range(0, 16), IterType::Opaque)};
      inner->body = bufferStore(b[0], floatImm(f32, 1), {0});
      auto* root = new BlockNode();
      root->name = "root";
      root->allocBuffers = {makeBuffer("scratch", f32, {4}, "shared")};
      root->annotations = {{"k", 1}};
      root->body = Stmt(Block(inner));
      return blockRealize({}, Expr(), Block(root));
    }));
  }

  void roundTripReductionInt64() {
    CHECK_ROUND_TRIP(funcWith({{intImm(i64, 8), intImm(i64, 8)}, {intImm(i64, 8)}}, [](const std::vector<Buffer>& b) {
      Var i = makeVar("i", i64), k = makeVar("k", i64), vi = makeVar("vi", i64), vk = makeVar("vk", i64);
      auto* blk = new BlockNode();
      blk->name = "sum";
      blk->iterVars = {IterVar(vi, Range(intImm(i64, 0), intImm(i64, 8)), IterType::DataPar),
                       IterVar(vk, Range(intImm(i64, 0), intImm(i64, 8)), IterType::CommReduce)};
      blk->reads = {BufferRegion(b[0], {Range(vi, intImm(i64, 1)), Range(vk, intImm(i64, 1))})};
      blk->writes = {BufferRegion(b[1], {Range(vi, intImm(i64, 1))})};
      blk->init = bufferStore(b[1], floatImm(f32, 0), {vi});
      blk->body = bufferStore(b[1], max(bufferLoad(b[1], {vi}), bufferLoad(b[0], {vi, vk})), {vi});
      Stmt br = blockRealize({i, k}, Expr(), Block(blk));
      return rootOf(forLoop(i, intImm(i64, 0), intImm(i64, 8), ForKind::Parallel,
                            forLoop(k, intImm(i64, 0), intImm(i64, 8), ForKind::Serial, br)));
    }));
  }

  void roundTripBufferKeywordsAndScalarParams() {
    Var n = makeVar("n"), m = makeVar("m", i64);
    Buffer A = makeBuffer("A", DataType::Int(8), {n, 8}, "shared");
    auto* an = new BufferNode(*A.get());
    an->strides = {16, 1};
    an->elemOffset = intImm(DataType::Int(32), 4);
    an->alignment = 16;
    A = Buffer(an);
    Buffer B = makeBuffer("B", DataType::UInt(16), {m});
    auto* bn = new BufferNode(*B.get());
    bn->elemOffset = Expr();
    B = Buffer(bn);
    Var pa = makeVar("A", DataType::Handle()), pb = makeVar("B", DataType::Handle());
    Var i = makeVar("i", i64);
    Stmt body = seq({bufferStore(A, intImm(DataType::Int(8), -128), {0, 0}),
                     forLoop(i, intImm(i64, 0), m, ForKind::Serial,
                             bufferStore(B, intImm(DataType::UInt(16), 65535), {i}))});
    CHECK_ROUND_TRIP(makePrimFunc("k", {pa, n, pb, m}, {{pa, A}, {pb, B}}, body));
  }

  void roundTripSymbolicShape() {
    Var m = makeVar("m");
    Buffer A = makeBuffer("A", f32, {m, Expr(m) * 2});
    Var pa = makeVar("A", DataType::Handle());
    Var i = makeVar("i");
    CHECK_ROUND_TRIP(makePrimFunc("main", {pa}, {{pa, A}},
                                  forLoop(i, 0, m, ForKind::Serial, bufferStore(A, floatImm(f32, 0), {i, Expr(i) * 2}))));
  }

  void roundTripAllocationForms() {
    CHECK_ROUND_TRIP(funcWith({{16}}, [](const std::vector<Buffer>& b) {
      Var d1 = makeVar("d", DataType::Handle()), d2 = makeVar("d", DataType::Handle());
      Var flag = makeVar("flag", DataType::Bool());
      auto* an = new AllocateNode(d1, f32, {4, 4}, boolImm(false), evaluate(0), "local", {{"note", stringImm("a")}});
      Stmt a1 = Stmt(an);
      Buffer V = makeBuffer("V", f32, {16});
      auto* vn = new BufferNode(*V.get());
      vn->data = d2;
      V = Buffer(vn);
      Buffer Fresh = makeBuffer("Fresh", f32, {2});
      Stmt a2 = allocate(d2, f32, {16}, declBuffer(V, bufferStore(V, bufferLoad(b[0], {3}), {3})));
      Buffer Flat = makeBuffer("Flat", f32, {16});
      auto* fn = new BufferNode(*Flat.get());
      fn->data = b[0]->data;
      Flat = Buffer(fn);
      Stmt viewOfParam = declBuffer(Flat, bufferStore(Flat, floatImm(f32, 2), {1}));
      return seq({a1, a2, declBuffer(Fresh, evaluate(bufferLoad(Fresh, {0}))),
                  letStmt(flag, boolImm(true), ifThen(flag, viewOfParam))});
    }));
  }

  void roundTripUndeclaredBufferViews() {
    // Buffers over an allocation without a DeclBuffer print as T.Buffer views where first used.
    CHECK_ROUND_TRIP(funcWith({{16}}, [](const std::vector<Buffer>& b) {
      Var p = makeVar("p", DataType::Handle());
      Buffer V = makeBuffer("V", f32, {16});
      auto* vn = new BufferNode(*V.get());
      vn->data = p;
      V = Buffer(vn);
      Var i = makeVar("i"), j = makeVar("j");
      Stmt fill = forLoop(i, 0, 16, ForKind::Serial, bufferStore(V, bufferLoad(b[0], {i}), {i}));
      Stmt back = forLoop(j, 0, 16, ForKind::Serial, bufferStore(b[0], bufferLoad(V, {j}) * 2, {j}));
      return allocate(p, f32, {16}, seq({fill, back}));
    }));
    PrimFunc f = funcWith({{16}}, [](const std::vector<Buffer>& b) {
      Buffer W = makeBuffer("W", f32, {4});
      return seq({bufferStore(W, floatImm(f32, 1), {0}), bufferStore(b[0], bufferLoad(W, {0}), {0})});
    });
    std::string t = printFunc(f);
    QVERIFY2(t.find("    W = T.Buffer((4,), \"float32\")\n    W[0] = T.float32(1)\n") != std::string::npos, t.c_str());
  }

  void roundTripModule() {
    IRModule m;
    m.add(matmulFunc(8));
    m.add(kitchenSinkFunc());
    PrimFunc other = makePrimFunc("other", {}, {}, evaluate(0));
    m.add(other);
    std::string t = printModule(m);
    IRModule back;
    TRY_PARSE(back = parseModule(t));
    QCOMPARE(QString::fromStdString(printModule(back)), QString::fromStdString(t));
    QCOMPARE(back.functions.size(), size_t(2));  // matmul and kitchen sink are both "main"
    QVERIFY2(structuralEqual(m, back), structuralDiff(m, back).c_str());
  }

  void roundTripExpressions() {
    Var a = makeVar("a"), b = makeVar("b"), x = makeVar("x", f32), c = makeVar("c", DataType::Bool());
    Var l = makeVar("l");
    Buffer A = makeBuffer("A", f32, {64}), S = makeBuffer("S", f32, {});
    double inf = std::numeric_limits<double>::infinity();
    std::vector<Expr> exprs = {
        3, -3, intImm(i64, -9000000000LL), intImm(DataType::UInt(8), 200), intImm(DataType::Int(8), -128),
        boolImm(true), floatImm(f32, 0.1f), floatImm(DataType::Float(64), 1.0 / 3), floatImm(f32, inf),
        floatImm(f32, -inf), floatImm(f32, -0.0), floatImm(DataType::Float(16), 65504), floatImm(f32, 1e-40),
        stringImm("quote\" back\\ \t\x01"), Expr(a) + b * 3, (Expr(a) + b) * 3, Expr(a) - (Expr(b) - 1),
        floordiv(a, 4) + floormod(b, 4), truncdiv(a, b) - truncmod(a, b), min(a, b) + max(a, -1),
        Expr(x) / floatImm(f32, 3), (Expr(a) < b) && !(Expr(b) >= 4), eq(a, b) || ne(a, 2),
        eq(Expr(a) <= b, c), select(c, x, floatImm(f32, 0)), let(l, Expr(a) * 2, Expr(l) + l),
        cast(i64, a), cast(f32, Expr(a) + 1), ramp(a, 2, 8), broadcast(x, 4) + bufferLoad(A, {ramp(0, 1, 4)}),
        bufferLoad(S, {}), ifThenElse(c, x, floatImm(f32, 1)), call(DataType::Int(32), "exp", {x}),
        call(f32, "custom_op", {x, a}), -Expr(x), -Expr(a)};
    for (auto& name : intrinsicNames()) {
      const Intrinsic* in = findIntrinsic(name);
      if (name == "if_then_else") continue;
      if (in->numArgs == 3) exprs.push_back(call(name, {x, Expr(x) * 2, Expr(x) + floatImm(f32, 1)}));
      else exprs.push_back(in->numArgs == 2 ? call(name, {x, Expr(x) * 2}) : call(name, {x}));
    }
    for (auto& e : exprs) {
      std::string t = printExpr(e);
      Expr back;
      TRY_PARSE(back = parseExpr(t, {a, b, x, c}, {A, S}));
      QVERIFY2(structuralEqual(e, back), (t + " -> " + printExpr(back) + "\n" + structuralDiff(e, back)).c_str());
      QCOMPARE(QString::fromStdString(printExpr(back)), QString::fromStdString(t));
    }
    // NaN compares bitwise-unequal only by payload; check it separately.
    Expr nan = parseExpr("T.float32(\"nan\")");
    QVERIFY(std::isnan(nan.as<FloatImmNode>()->value));
    QVERIFY(std::signbit(parseExpr("T.float32(-0.0)").as<FloatImmNode>()->value));
  }

  // --- TVM-style input ------------------------------------------------------------------
  void parsesTvmStyleScript() {
    const char* text = R"(from tvm.script import tir as T

@T.prim_func
def add(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")) -> None:
    # a comment
    for i in range(8):

        b[i] = a[i] + 1.0  # trailing comment
        if i == 0:
            b[i] = 0
        elif i == 1:
            b[i] = T.float32(x) if False else a[i]
)";
    try {
      parseFunc(text);
      QFAIL("conditional expressions are not supported and must be rejected");
    } catch (const ParseError& e) {
      QCOMPARE(e.span().line, 12);
    }
    std::string ok = std::string(text);
    ok = ok.substr(0, ok.find("            b[i] = T.float32(x)")) + "            b[i] = a[i] * 2.0\n";
    PrimFunc f;
    TRY_PARSE(f = parseFunc(ok));
    QCOMPARE(QString::fromStdString(f->name), QString("add"));
    QVERIFY(f->attrs.empty());
    auto* loop = f->body.as<ForNode>();
    QVERIFY(loop);  // no blocks: no implicit root
    auto* s = loop->body.as<SeqStmtNode>();
    QVERIFY(s && s->seq.size() == 2);
    auto* st = s->seq[0].as<BufferStoreNode>();
    QCOMPARE(st->value.dtype(), f32);  // a bare float literal is float32
    auto* iff = s->seq[1].as<IfThenElseNode>();
    QVERIFY(iff->elseCase.as<IfThenElseNode>());  // elif
    auto* zero = iff->thenCase.as<BufferStoreNode>();
    QVERIFY(zero->value.as<FloatImmNode>());  // `= 0` into a float buffer becomes a float immediate
  }

  void matchBufferAndAxisAliases() {
    const char* text = R"(@T.prim_func
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (8,), "float32")
    B = T.match_buffer(b, [8])
    for i in T.serial(0, 8):
        with T.block("copy"):
            vi = T.axis.S(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi]
)";
    PrimFunc f;
    TRY_PARSE(f = parseFunc(text));
    QCOMPARE(f->bufferMap.size(), size_t(2));
    QCOMPARE(QString::fromStdString(f->paramBuffer(1)->name), QString("B"));
    QCOMPARE(f->paramBuffer(1)->dtype, f32);
    std::string printed = printFunc(f);
    QVERIFY2(printed.find("def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):") !=
                 std::string::npos,
             printed.c_str());
    QVERIFY(structuralEqual(f, parseFunc(printed)));
    QVERIFY_THROWS_EXCEPTION(ParseError, parseFunc("@T.prim_func\ndef main(a: T.int32):\n    A = T.match_buffer(a, (8,))\n"));
  }

  void parsesTvmPrintedSchedule() {
    // As TVM prints a cache_write'd, tiled GEMM: function-level alloc_buffer under the elided root.
    const char* text = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_global = T.alloc_buffer((1024, 1024))
    for i_0, j_0 in T.grid(32, 32):
        for k_0 in range(256):
            for i_1, j_1, k_1 in T.grid(32, 32, 4):
                with T.block("C"):
                    vi = T.axis.spatial(1024, i_0 * 32 + i_1)
                    vj = T.axis.spatial(1024, j_0 * 32 + j_1)
                    vk = T.axis.reduce(1024, k_0 * 4 + k_1)
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C_global[vi, vj])
                    with T.init():
                        C_global[vi, vj] = T.float32(0.0)
                    C_global[vi, vj] = C_global[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0, ax1 in T.grid(32, 32):
            with T.block("C_global"):
                v0 = T.axis.spatial(1024, i_0 * 32 + ax0)
                v1 = T.axis.spatial(1024, j_0 * 32 + ax1)
                T.reads(C_global[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_global[v0, v1]
)";
    PrimFunc f;
    TRY_PARSE(f = parseFunc(text));
    auto* root = f->body.as<BlockRealizeNode>();
    QVERIFY(root);
    QCOMPARE(root->block->allocBuffers.size(), size_t(1));
    QCOMPARE(root->block->allocBuffers[0]->dtype, f32);
    std::string printed = printFunc(f);
    QVERIFY(printed.find("    with T.block(\"root\"):\n        C_global = T.alloc_buffer((1024, 1024), \"float32\")\n") !=
            std::string::npos);
    PrimFunc g = parseFunc(printed);
    QVERIFY2(structuralEqual(f, g), structuralDiff(f, g).c_str());
    QCOMPARE(QString::fromStdString(printFunc(g)), QString::fromStdString(printed));
  }

  void tvmLetAndBufferViewForms() {
    const char* text = R"(@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    x = T.int32()
    p = T.allocate([16], "float32", "global")
    P = T.Buffer((16,), "float32", data=p)
    for i in range(16):
        P[i] = A[T.Let(x + 1, where={x: i // 2})]
)";
    PrimFunc f;
    TRY_PARSE(f = parseFunc(text));
    auto* alloc = f->body.as<AllocateNode>();
    QVERIFY(alloc);
    auto* store = alloc->body.as<ForNode>()->body.as<BufferStoreNode>();
    QVERIFY(store->buffer->data.same_as(alloc->bufferVar));  // the view uses the allocation
    auto* let = store->value.as<BufferLoadNode>()->indices[0].as<LetNode>();
    QVERIFY(let);
    QCOMPARE(QString::fromStdString(printExpr(store->value)), QString("A[T.Let(x, i // 2, x + 1)]"));
  }

  void implicitRootBlock() {
    const char* text = R"(@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            T.reads()
            T.writes(B[vi])
            B[vi] = A[vi]
)";
    PrimFunc f;
    TRY_PARSE(f = parseFunc(text));
    auto* root = f->body.as<BlockRealizeNode>();
    QVERIFY(root);
    QCOMPARE(QString::fromStdString(root->block->name), QString("root"));
    QCOMPARE(root->block->allocBuffers.size(), size_t(1));
    QVERIFY(root->block->body.as<ForNode>());
    // A function whose only statement is an explicit root block is not wrapped again.
    PrimFunc g = parseFunc(printFunc(f));
    QVERIFY(structuralEqual(f, g));
  }

  void untypedLetAndCasts() {
    const char* text = R"(@T.prim_func
def main(A: T.Buffer((4,), "float32"), n: T.int32):
    x = n * 2
    y: T.int64 = 5
    A[0] = T.float32(x)
    A[1] = T.Cast("float32", y)
)";
    PrimFunc f;
    TRY_PARSE(f = parseFunc(text));
    auto* let = f->body.as<LetStmtNode>();
    QVERIFY(let);
    QCOMPARE(let->var->dtype, DataType::Int(32));
    auto* let2 = let->body.as<LetStmtNode>();
    QCOMPARE(let2->var->dtype, i64);
    QCOMPARE(let2->value.dtype(), i64);  // the literal takes the annotated type
    auto* seqs = let2->body.as<SeqStmtNode>();
    QVERIFY(seqs->seq[0].as<BufferStoreNode>()->value.as<CastNode>());
  }

  void spansPointAtSource() {
    const char* text = "@T.prim_func\n"
                       "def main(A: T.Buffer((16,), \"float32\")):\n"
                       "    for i in range(16):\n"
                       "        A[i] = A[i] + T.float32(1)\n";
    PrimFunc f;
    TRY_PARSE(f = parseFunc(text, "k.py"));
    QCOMPARE(QString::fromStdString(f->span.fileName()), QString("k.py"));
    QCOMPARE(f->span.line, 1);
    auto* loop = f->body.as<ForNode>();
    QCOMPARE(f->body->span.line, 3);
    QCOMPARE(f->body->span.column, 5);
    QCOMPARE(f->body->span.endLine, 4);  // the loop ends where its body ends
    QCOMPARE(f->body->span.endColumn, 35);
    QCOMPARE(loop->loopVar->span.line, 3);
    QCOMPARE(loop->loopVar->span.column, 9);
    auto* st = loop->body.as<BufferStoreNode>();
    QCOMPARE(loop->body->span.line, 4);
    QCOMPARE(loop->body->span.column, 9);
    QCOMPARE(st->value->span.column, 16);  // the sum starts at the load A[i]
    QCOMPARE(st->value->span.endColumn, 35);
    auto* sum = st->value.as<BinaryNode>();
    QCOMPARE(sum->b->span.column, 23);
    QCOMPARE(f->bufferMap[0].second->span.column, 10);
    QVERIFY(f->bufferMap[0].second->span.defined());
  }

  void everyParsedNodeHasASpan() {
    PrimFunc f = parseFunc(printFunc(kitchenSinkFunc()));
    int missing = 0, total = 0;
    postOrderVisit(f->body, [&](const IRNode* n) {
      ++total;
      if (!n->span.defined()) ++missing;
    });
    QVERIFY(total > 30);
    QCOMPARE(missing, 0);
  }

  // --- errors ---------------------------------------------------------------------------
  void expectedErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("message");
    std::string head = kHead;
    std::string loop = head + "    for i in range(16):\n";
    auto add = [](const char* name, std::string text, int line, int col, const char* msg) {
      QTest::newRow(name) << QString::fromStdString(text) << line << col << QString(msg);
    };
    add("unknownBuffer", loop + "        A[i] = Q[i]\n", 4, 16, "unknown buffer 'Q'");
    add("missingParen", loop + "        A[i] = T.max(A[i], 1.0 2.0)\n", 4, 32, "expected ')' after argument list");
    add("remapKinds",
        "@T.prim_func\ndef main(A: T.Buffer((16, 16), \"float32\")):\n    for i, j in T.grid(16, 16):\n"
        "        with T.block(\"B\"):\n            vi, vj = T.axis.remap(\"SX\", [i, j])\n"
        "            A[vi, vj] = T.float32(0)\n",
        5, 35, "T.axis.remap kinds 'SX' must be S or R");
    add("unterminatedString", head + "    T.func_attr({\"oops)\n", 3, 18, "unterminated string literal");
    add("badCharacter", loop + "        A[i] = A[i] $ 1\n", 4, 21, "unexpected character '$'");
    add("badDedent", loop + "        A[i] = T.float32(0)\n      A[0] = T.float32(1)\n", 5, 7,
        "unindent does not match any outer indentation level");
    add("unknownName", loop + "        A[i] = A[i] + zz\n", 4, 23, "unknown name 'zz'");
    add("indexCount", loop + "        A[i, i] = T.float32(0)\n", 4, 10, "is indexed with 2");
    add("int32Overflow", loop + "        A[i] = A[3000000000]\n", 4, 18, "does not fit in int32");
    add("unknownDtype", "@T.prim_func\ndef main(A: T.Buffer((16,), \"float33\")):\n    pass\n", 2, 29,
        "unknown data type 'float33'");
    add("axisOutsideBlock", loop + "        vi = T.axis.spatial(16, i)\n", 4, 14, "only allowed directly inside a T.block");
    add("unknownFunction", loop + "        A[i] = T.foo(A[i])\n", 4, 18, "unknown function 'T.foo'");
    add("chainedCompare", loop + "        if 0 < i < 4:\n            A[i] = T.float32(0)\n", 4, 18, "chained comparisons");
    add("int8Range", loop + "        A[i] = T.Cast(\"float32\", T.int8(300))\n", 4, 41, "out of range");
    add("duplicateParam", "@T.prim_func\ndef main(A: T.Buffer((16,), \"float32\"), A: T.int32):\n    pass\n", 2, 41,
        "duplicate parameter 'A'");
    add("unknownLoopKind", head + "    for i in T.sequential(16):\n        pass\n", 3, 16, "unknown loop kind 'T.sequential'");
    add("paramWithoutType", "@T.prim_func\ndef main(A):\n    pass\n", 2, 11, "expected ':' after parameter 'A'");
    add("gridCount", head + "    for i, j in T.grid(16):\n        pass\n", 3, 17, "T.grid has 1 extents for 2 loop variables");
    add("assignToExpr", loop + "        i + 1 = 3\n", 4, 15, "only a buffer element A[...] can be assigned");
    add("lanesMismatch", loop + "        A[i] = T.float32(T.Ramp(0, 1, 4) + T.Ramp(0, 1, 8))\n", 4, 42, "lanes mismatch");
    add("missingIndent", loop + "    A[0] = T.float32(1)\n", 4, 5, "expected an indented block after the for statement");
    add("unmatchedParen", loop + "        A[i] = A[i])\n", 4, 20, "unmatched ')'");
    add("bufferAsValue", loop + "        A[i] = A + 1\n", 4, 16, "buffer 'A' must be indexed");
    add("initOutsideBlock", loop + "        with T.init():\n            pass\n", 4, 16, "T.init is only allowed directly inside a T.block");
    add("remapNonLoop",
        head + "    with T.block(\"b\"):\n        vi = T.axis.remap(\"S\", [3])\n        pass\n", 4, 33,
        "T.axis.remap values must be loop variables");
    add("regionRank",
        head + "    for i in range(16):\n        with T.block(\"b\"):\n            vi = T.axis.spatial(16, i)\n"
               "            T.reads(A[vi, 0])\n            A[vi] = T.float32(0)\n",
        6, 22, "has 1 dimension(s) but the region has 2");
    add("unclosedBracket", loop + "        A[i] = T.max(A[i],\n", 4, 21, "'(' is never closed");
    add("badDecorator", "@T.function\ndef main():\n    pass\n", 1, 4, "expected '@T.prim_func'");
    add("funcAttrInLoop", loop + "        T.func_attr({})\n", 4, 9, "T.func_attr is only allowed at function level");
    add("lanesLiteral", loop + "        A[T.Ramp(0, 1, i)] = A[0]\n", 4, 24, "lanes of T.Ramp must be an integer literal");
    add("floatIndex", loop + "        A[T.float32(1)] = A[0]\n", 4, 11, "a buffer index must be an integer");
    add("intrinsicArity", loop + "        A[i] = T.exp(A[i], A[i])\n", 4, 18, "T.exp takes 1 argument(s), got 2");
    add("axisNeedsValue", loop + "        with T.block(\"b\"):\n            vi = T.axis.spatial(16)\n            pass\n", 5,
        13, "the axis 'vi' needs a binding value");
    add("whereUsesAxis",
        loop + "        with T.block(\"b\"):\n            vi = T.axis.spatial(16, i)\n            T.where(vi < 8)\n"
               "            pass\n",
        6, 21, "T.where uses the block's own axis 'vi'");
    add("negativeShape", "@T.prim_func\ndef main(A: T.Buffer((4, -2), \"float32\")):\n    A[0, 0] = T.float32(1)\n", 2, 22,
        "buffer shape has the negative extent -2 in dimension 1");
    add("negativeAllocShape", loop + "        B = T.alloc_buffer((-3,), \"float32\")\n", 4, 28,
        "buffer shape has the negative extent -3 in dimension 0");
    add("suggestFunction", loop + "        A[i] = T.sqrtt(A[i])\n", 4, 18, "unknown function 'T.sqrtt'; did you mean 'T.sqrt'?");
    add("suggestName", loop + "        A[i] = A[ii]\n", 4, 18, "unknown name 'ii'; did you mean 'i'?");
    add("elseWithoutIf", loop + "        else:\n            pass\n", 4, 9, "'else' without a matching 'if'");
  }

  void expectedErrors() {
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, message);
    try {
      parseFunc(text.toStdString(), "bad.py");
      QFAIL("expected a ParseError");
    } catch (const ParseError& e) {
      QString what = QString::fromStdString(e.formatted());
      QVERIFY2(what.contains(message), qPrintable(what));
      QVERIFY2(e.span().line == line && e.span().column == column, qPrintable(what));
      QCOMPARE(QString::fromStdString(e.span().fileName()), QString("bad.py"));
    }
  }

  void inferredAccessRegions() {
    // Like TVMScript, blocks that leave out T.reads / T.writes get them from their body: the
    // presets with those lines deleted parse back to the same function.
    for (const char* spec : {"matmul:M=4,N=5,K=6", "batch_matmul:B=2,M=3,N=4,K=5", "relu:M=3,N=4", "add:M=3,N=4",
                             "transpose:M=3,N=4", "softmax:M=3,N=5", "reduce_sum:M=3,N=4", "layernorm:M=2,N=6"}) {
      std::string text = printFunc(topi::buildWorkload(topi::parseWorkloadSpec(spec)));
      std::string stripped;
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);)
        if (line.find("T.reads(") == std::string::npos && line.find("T.writes(") == std::string::npos)
          stripped += line + "\n";
      QVERIFY(stripped.size() < text.size());
      PrimFunc f;
      TRY_PARSE(f = parseFunc(stripped));
      QCOMPARE(QString::fromStdString(printFunc(f)), QString::fromStdString(text));
    }
    // An index over an inner loop covers the whole dimension; a block's own allocation is left
    // out; written-out lists are kept as given.
    PrimFunc g;
    TRY_PARSE(g = parseFunc("@T.prim_func\n"
                            "def main(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
                            "    for i in range(4):\n"
                            "        with T.block(\"row\"):\n"
                            "            vi = T.axis.spatial(4, i)\n"
                            "            T.writes(B[vi])\n"
                            "            t = T.alloc_buffer((1,), \"float32\")\n"
                            "            t[0] = T.float32(0)\n"
                            "            for k in range(8):\n"
                            "                t[0] = t[0] + A[vi, k]\n"
                            "            B[vi] = t[0]\n"));
    std::string printed = printFunc(g);
    QVERIFY2(printed.find("T.reads(A[vi, 0:8])\n") != std::string::npos, printed.c_str());
    QVERIFY2(printed.find("T.writes(B[vi])\n") != std::string::npos, printed.c_str());
  }

  void wholeInputErrors() {
    QVERIFY_THROWS_EXCEPTION(ParseError, parseFunc(""));
    QVERIFY_THROWS_EXCEPTION(ParseError, parseFunc("# only a comment\n"));
    // Even "no function at all" is located, so the CLI prints FILE:LINE:COL.
    for (const char* text : {"", "# only a comment\n", "x = 1\n"}) {
      try {
        parseFunc(text, "empty.tir");
        QFAIL("no function");
      } catch (const ParseError& e) {
        QVERIFY2(e.span().line >= 1 && e.span().column >= 1, e.formatted().c_str());
        QVERIFY2(QString::fromStdString(e.formatted()).startsWith("empty.tir:"), e.formatted().c_str());
      }
    }
    std::string two = printFunc(matmulFunc(4)) + printFunc(kitchenSinkFunc());
    try {
      parseFunc(two);
      QFAIL("two functions");
    } catch (const ParseError& e) {
      QVERIFY(QString(e.what()).contains("expected one @T.prim_func, found 2"));
      QVERIFY(e.span().line > 10);
    }
    QVERIFY_THROWS_EXCEPTION(ParseError, parseExpr("1 +"));
    QVERIFY_THROWS_EXCEPTION(ParseError, parseExpr("x + 1"));
    QVERIFY_THROWS_EXCEPTION(ParseError, parseExpr("1 2"));
    QVERIFY_THROWS_EXCEPTION(ParseError, parseExpr(std::string(5000, '(') + "1" + std::string(5000, ')')));
    QVERIFY_THROWS_EXCEPTION(ParseError, parseExpr(std::string(5000, '-') + "1"));
    QVERIFY_THROWS_EXCEPTION(ParseError, parseExpr("\"a\" + 1"));
    // Long runs of flat bindings nest their bodies; 500 of them still parse, 5000 are refused.
    auto lets = [](int n) {
      std::string t = "@T.prim_func\ndef main(A: T.Buffer((1,), \"int32\")):\n";
      for (int i = 0; i < n; ++i) t += "    x" + std::to_string(i) + ": T.int32 = " + std::to_string(i) + "\n";
      return t + "    A[0] = x0\n";
    };
    PrimFunc deep;
    TRY_PARSE(deep = parseFunc(lets(500)));
    QCOMPARE(QString::fromStdString(printFunc(parseFunc(printFunc(deep)))), QString::fromStdString(printFunc(deep)));
    try {
      parseFunc(lets(5000));
      QFAIL("5000 nested statements");
    } catch (const ParseError& e) {
      QVERIFY(QString(e.what()).contains("nested too deeply"));
    }
  }
};

QTEST_APPLESS_MAIN(TestParser)
#include "test_parser.moc"
