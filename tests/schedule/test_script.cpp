// The schedule script: syntax, values, errors with line:col, partial application, lambdas.
#include "ScheduleTestUtil.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

class TestScript : public QObject {
  Q_OBJECT
private slots:
  void syntaxForms() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    Schedule sch(f);
    ScriptResult r = runScript(sch, R"(# A comment line, then a blank line

b = sch.get_block('C')   # single quotes, trailing comment
loops = sch.get_loops(b)
(i, j, k) = loops
[io, ii] = sch.split(loops[0], factors=[None, 2 * 2])
jo, ji = sch.split(j,
                   factors=[-(-16 // 8), None])
(x,) = sch.get_child_blocks(loops[-1])
sch.reorder(io, jo, k, ii, ji,)
sch.annotate(b, "s", "a" "b")
sch.annotate(b, "f", 1e-3)
sch.annotate(b, key := 1) if False else None
)");
    // The last line is not in the subset: the error names it, the earlier lines are applied.
    QVERIFY(!r.ok);
    QCOMPARE(r.linesApplied, 9);
    QCOMPARE(QString::fromStdString(r.message),
             QString("13:21: error: expected ',' or ')' in the argument list, found ':'"));
    std::string text = printFunc(sch.func());
    QVERIFY2(text.find("for i_0, j_0, k, i_1, j_1 in T.grid(4, 2, 8, 4, 8):") != std::string::npos,
             text.c_str());
    QVERIFY2(text.find("\"s\": \"ab\"") != std::string::npos, text.c_str());
    QVERIFY(structuralEqual(r.funcBefore, sch.func()));
  }
  void errorsPointAtTheirPlace() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    struct Case {
      const char* script;
      const char* kind;
      const char* message;
    } cases[] = {
        {"b = sch.get_blok(\"C\")", "AttributeError",
         "s.py:1:9: error: unknown schedule primitive 'get_blok'; did you mean 'get_block'?"},
        {"b = sch.get_block(\"C\")\nl = sch.get_loops(c)", "NameError",
         "s.py:2:19: error: name 'c' is not defined"},
        {"b = sch.get_block(\"C\")\ni, j = sch.get_loops(b)", "ValueError",
         "s.py:2:1: error: cannot unpack 3 values into 2 names"},
        {"b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.split(i, factor=4)",
         "TypeError",
         "s.py:3:21: error: split() got an unexpected keyword argument 'factor' (parameters: loop, "
         "factors, "
         "preserve_unit_iters)"},
        {"b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.split(i)", "TypeError",
         "s.py:3:5: error: split() missing required argument 'factors'"},
        {"b = sch.get_block(\"C\")\nsch.split(b, factors=[2, 8])", "TypeError",
         "s.py:2:11: error: argument 'loop' of split() must be LoopRV, got BlockRV"},
        {"b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.split(i, factors=[2, \"8\"])",
         "TypeError",
         "s.py:3:22: error: argument 'factors' of split() must be list of (None or int or ExprRV), "
         "got list"},
        {"b = sch.get_block(\"C\", \"main\", 3)", "TypeError",
         "s.py:1:32: error: get_block() takes 2 arguments but 3 were given"},
        {"b = sch.get_block(\"C\"\ni = 1", "ParseError", "s.py:1:18: error: '(' was never closed"},
        {"b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.reorder(i, [j, k)\n", "ParseError",
         "s.py:3:21: error: closing ')' does not match the opening '[' at 3:16"},
        {"b = sch.get_block(\"C\")\nsch.split(sch.get_loops(b)[0], factors=[None, 4]", "ParseError",
         "s.py:2:10: error: '(' was never closed"},
        {"b = sch.get_block(\"C)", "ParseError", "s.py:1:19: error: unterminated string"},
        {"b = sch.get_block(\"C\") extra", "ParseError",
         "s.py:1:24: error: unexpected 'extra' at the end of the statement"},
        {"b = print(\"C\")", "TypeError",
         "s.py:1:5: error: only schedule primitives can be called (sch.<primitive>(...)), not "
         "'print'"},
        {"sch = 3", "TypeError", "s.py:1:1: error: cannot assign to 'sch' (it is the schedule)"},
        {"x = [1, 2][5]", "IndexError", "s.py:1:12: error: index 5 out of range for a list of 2"},
        {"x = 1 // 0", "ZeroDivisionError", "s.py:1:7: error: integer division by zero"},
        {"b = sch.get_block(\"C\")\nsch.parallel(sch.get_loops(b)[2])", "WrongBlockIterTypeError",
         "s.py:2:5: error: cannot parallelize loop 'k': it binds the reduce iter var 'v_k' of "
         "block 'C' (iterations of a "
         "reduction depend on each other)"},
        {"x = $", "ParseError", "s.py:1:5: error: unexpected character '$'"},
        {"import tvm\nb = sch.get_block(\"C\")", "ParseError",
         "s.py:1:1: error: 'import' statements are not part of the schedule script (only "
         "assignments and calls such as `b = sch.get_block(\"C\")`; `sch` is already defined)"},
        {"b = sch.get_block(\"C\")\nfor l in sch.get_loops(b):\n    sch.unroll(l)", "ParseError",
         "s.py:2:1: error: 'for' statements are not part of the schedule script (only "
         "assignments and calls such as `b = sch.get_block(\"C\")`; `sch` is already defined)"},
    };
    for (auto& c : cases) {
      auto [kind, msg] = scriptError(f, c.script);
      QVERIFY2(kind == c.kind, (std::string(c.script) + " -> " + kind + ": " + msg).c_str());
      QCOMPARE(QString::fromStdString(msg), QString(c.message));
    }
  }
  void partialApplication() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    Schedule sch(f);
    ScriptResult r = runScript(sch,
                               "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nio, ii = "
                               "sch.split(i, factors=[None, 4])\n"
                               "sch.vectorize(k)\nsch.parallel(io)\n",
                               "p.py");
    QVERIFY(!r.ok);
    QCOMPARE(r.linesApplied, 3);
    QCOMPARE(QString::fromStdString(r.errorKind), QString("WrongBlockIterTypeError"));
    QVERIFY(r.message.rfind("p.py:4:5: error: cannot vectorize loop 'k'", 0) == 0);
    QCOMPARE(r.span.line, 4);
    // The detail carries the IR with the loop and block underlined.
    QVERIFY2(r.detail.find("^^^") != std::string::npos, r.detail.c_str());
    // The split stayed applied; funcBefore is the IR just before the failing line.
    QVERIFY(structuralEqual(r.funcBefore, sch.func()));
    QVERIFY(!structuralEqual(f, sch.func()));
    QCOMPARE(sch.trace().insts.size(), size_t(3));
    // Errors that are not a primitive's (names, arguments, syntax) show the IR before the line too.
    Schedule sch2(f);
    ScriptResult r2 = runScript(sch2,
                                "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nio, ii = "
                                "sch.split(i, factors=[None, 4])\nsch.parallel(jj)\n",
                                "p.py");
    QVERIFY(!r2.ok);
    QCOMPARE(QString::fromStdString(r2.errorKind), QString("NameError"));
    QVERIFY2(r2.detail.rfind("name 'jj' is not defined\n", 0) == 0, r2.detail.c_str());
    QVERIFY2(r2.detail.find("for i_0, i_1, j, k in T.grid(4, 4, 16, 8):") != std::string::npos,
             r2.detail.c_str());
  }
  void neverThrows() {
    PrimFunc f = workload("matmul:M=4,N=4,K=4");
    const char* junk[] = {"",
                          "\n\n",
                          "(",
                          ")",
                          "a, = ",
                          "lambda",
                          "sch.",
                          "sch.split(",
                          "x = lambda i: ",
                          "[1, 2",
                          "'''",
                          "a = b = c",
                          "sch.get_block(\"C\")(1)",
                          "x = -\"a\"",
                          "x = 1.5.2",
                          "x = 99999999999999999999999",
                          "\\",
                          "sch.reorder()",
                          "sch.fuse()",
                          "a, b = 1"};
    std::string deep = "x = " + std::string(100000, '(') + "1" + std::string(100000, ')');
    std::string deepNeg = "x = " + std::string(100000, '-') + "1";
    std::vector<std::string> all(std::begin(junk), std::end(junk));
    all.push_back(deep);
    all.push_back(deepNeg);
    std::string longSum = "x = 1";
    std::string longIndex = "x = [1]";
    for (int i = 0; i < 100000; ++i) {
      longSum += "+1";
      longIndex += "[0]";
    }
    all.push_back(longSum);
    all.push_back(longIndex);
    for (const std::string& text : all) {
      const char* s = text.c_str();
      Schedule sch(f);
      ScriptResult r;
      try {
        r = runScript(sch, s);
      } catch (...) {
        QFAIL(s);
      }
      if (std::string(s).find_first_not_of("\n") != std::string::npos && !r.ok)
        QVERIFY2(!r.message.empty() && r.errorKind != "InternalError",
                 (std::string(s) + " -> " + r.message).c_str());
    }
  }
  void lambdas() {
    ScriptExprPtr e = parseScriptExpr("lambda n, c, h, w: (n, c // 4, h, w, c % 4)");
    QCOMPARE(int(e->kind), int(ScriptExpr::Kind::Lambda));
    ScriptLambda f{e->params, e->items[0]};
    QCOMPARE(QString::fromStdString(f.str()),
             QString("lambda n, c, h, w: (n, c // 4, h, w, c % 4)"));
    Var n = makeVar("n"), c = makeVar("c"), h = makeVar("h"), w = makeVar("w");
    auto out = f.apply({n, c, h, w});
    QCOMPARE(out.size(), size_t(5));
    QCOMPARE(QString::fromStdString(printExpr(out[1])), QString("c // 4"));
    QCOMPARE(QString::fromStdString(printExpr(out[4])), QString("c % 4"));
    ScriptExprPtr g = parseScriptExpr("lambda i, j: (j, (i + 1) * 2 - -j)");
    QCOMPARE(QString::fromStdString(g->str()), QString("lambda i, j: (j, (i + 1) * 2 - -j)"));
    QVERIFY_THROWS_EXCEPTION(TypeError, (ScriptLambda{g->params, g->items[0]}.apply({n})));
    ScriptExprPtr bad = parseScriptExpr("lambda i: (i / 2,)");
    QVERIFY_THROWS_EXCEPTION(TypeError, (ScriptLambda{bad->params, bad->items[0]}.apply({n})));
    // In a script a lambda is a value (unused by the primitives here: a type error names it).
    auto [kind, msg] =
        scriptError(workload("matmul:M=4,N=4,K=4"),
                    "b = sch.get_block(\"C\")\nsch.annotate(b, \"m\", lambda i: i)\n");
    QCOMPARE(QString::fromStdString(msg),
             QString("s.py:2:22: error: argument 'ann_val' of annotate() must be bool or float or "
                     "str or ExprRV, got lambda"));
  }
  void closeMatches() {
    auto close = closeInstructionKindNames("splitt");
    QVERIFY(!close.empty());
    QCOMPARE(QString::fromStdString(close[0]), QString("split"));
    auto [kind, msg] = scriptError(workload("matmul:M=4,N=4,K=4"), "sch.paralel(1)");
    QCOMPARE(QString::fromStdString(msg),
             QString("1:5: error: unknown schedule primitive 'paralel'; did you mean 'parallel'?")
                 .prepend("s.py:"));
    auto [kind2, msg2] = scriptError(workload("matmul:M=4,N=4,K=4"), "sch.frobnicate(1)");
    QCOMPARE(QString::fromStdString(msg2),
             QString("s.py:1:5: error: unknown schedule primitive 'frobnicate'"));
  }
  void blockNamesForBlockParams() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    Schedule sch(f);
    ScriptResult r =
        runScript(sch, "i, j, k = sch.get_loops(\"C\")\nsch.annotate(block_or_loop=\"C\", "
                       "ann_key=\"a\", ann_val=1)\n");
    QVERIFY2(r.ok, r.message.c_str());
    QCOMPARE(sch.trace().str(),
             std::string("b0 = sch.get_block(\"C\")\nl1, l2, l3 = sch.get_loops(b0)\n"
                         "b4 = sch.get_block(\"C\")\nsch.annotate(b4, \"a\", 1)\n"));
    auto [kind, msg] = scriptError(f, "i, j, k = sch.get_loops(\"D\")\n");
    QCOMPARE(QString::fromStdString(kind), QString("BlockNotFoundError"));
    QCOMPARE(QString::fromStdString(msg),
             QString("s.py:1:25: error: no block named 'D' in function 'main' (blocks: 'C')"));
    // A string where only a loop fits is still a type error.
    auto [kind2, msg2] = scriptError(f, "sch.parallel(\"C\")\n");
    QCOMPARE(QString::fromStdString(msg2),
             QString("s.py:1:14: error: argument 'loop' of parallel() must be LoopRV, got str"));
  }
  void starArguments() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    Schedule sch(f);
    ScriptResult r = runScript(sch, "loops = sch.get_loops(\"C\")\nsch.reorder(*[loops[2], "
                                    "loops[0]])\nf = sch.fuse(*loops[1:2] if False else *loops)\n");
    QCOMPARE(r.linesApplied, 2); // the third line is not in the subset
    r = runScript(sch, "loops = sch.get_loops(\"C\")\nf = sch.fuse(*loops)\n");
    QVERIFY2(r.ok, r.message.c_str());
    QVERIFY(printFunc(sch.func()).find("for k_j_i_fused in range(2048):") != std::string::npos);
    QVERIFY(sch.trace().str().find("sch.reorder(l3, l1)\n") != std::string::npos);
    auto [kind, msg] = scriptError(f, "sch.fuse(*3)\n");
    QCOMPARE(QString::fromStdString(msg),
             QString("s.py:1:10: error: only a list can be spread with *, not a int"));
  }
  void noFileName() {
    Schedule sch(workload("matmul:M=4,N=4,K=4"));
    ScriptResult r = runScript(sch, "\n  b = sch.get_block(\"D\")");
    QCOMPARE(QString::fromStdString(r.message).left(10), QString("2:11: erro"));
  }
};

QTEST_APPLESS_MAIN(TestScript)
#include "test_script.moc"
