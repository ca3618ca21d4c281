// Fuzzing the parser: truncated and mutated valid text must parse or throw ParseError, never
// anything else; whatever parses must print and re-parse to the same text.
#include <QtTest>

#include <random>

#include "core/support/Error.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "tests/text/TextFixtures.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

/// Seeds: printed fixtures plus hand-written text using the forms the printer never emits.
std::vector<std::string> seeds() {
  std::vector<std::string> s = {printFunc(matmulFunc(16)), printFunc(kitchenSinkFunc())};
  IRModule m;
  m.add(matmulFunc(4));
  m.add(makePrimFunc("g", {}, {}, evaluate(0)));
  s.push_back(printModule(m));
  s.push_back(R"(@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), n: T.int32):
    B = T.alloc_buffer((8,), "float32", scope="local")
    for i in T.serial(1, 8, annotations={"k": T.bool(True)}):
        with T.block("b"):
            vi = T.axis.spatial((1, 8), i)
            vk = T.axis.reduce(8, n)
            T.where(i < 7 and not n == 3 or False)
            T.reads([A[vi, 0:8]])
            T.writes(B[vi])
            T.block_attr({"x": -1, "y": T.float64(-0.5), "s": "str\n"})
            with T.init():
                B[vi] = T.float32("-inf")
            B[vi] = T.max(B[vi], T.Select(vk > 0, A[vi, vk], T.float32(0)))
    with T.LetStmt(n + 1) as m:
        while m < T.Let(q, 3, q * q):
            T.evaluate(T.call_intrin("int32", "tick", m))
    p = T.allocate([4], "float32", "global", condition=n > 0)
    P = T.decl_buffer((4,), "float32", data=p, elem_offset=None)
    P[T.Ramp(0, 1, 4)] = T.Broadcast(T.float32(1.5e-3), 4) + T.exp(P[T.Ramp(0, 1, 4)])
)");
  s.push_back(R"(from tvm.script import tir as T

@T.prim_func(private=True)
def h(a: T.handle, n: T.int64) -> None:
    A = T.match_buffer(a, (16,), "float32")
    x = T.int32()
    p = T.allocate([16], "float32", "global")
    P = T.Buffer((16,), "float32", data=p)
    for i in range(16):
        if i < 4:
            P[i] = A[T.Let(x + 1, where={x: i // 2})]
        elif i == 5:
            P[i] = T.float32(T.Cast("int32", A[i]))
        else:
            T.evaluate(T.call_intrin("float32", "noop", A[i], "s"))
)");
  return s;
}

/// Outcome of one attempt: parsed, rejected with ParseError, or anything else (a failure).
enum class Outcome { Parsed, Rejected, Bad };

Outcome attempt(const std::string& text, std::string& why) {
  try {
    IRModule m = parseModule(text, "fuzz.py");
    std::string printed = printModule(m);
    IRModule again = parseModule(printed, "fuzz2.py");
    if (printModule(again) != printed) {
      why = "print/parse is not a fixed point for:\n" + text + "\nprinted:\n" + printed;
      return Outcome::Bad;
    }
    // Free variables (`n = T.int32()`) compare by identity, so only closed functions must be equal.
    if (printed.find(" = T.int") == std::string::npos && printed.find(" = T.uint") == std::string::npos &&
        printed.find(" = T.float") == std::string::npos && printed.find(" = T.bool()") == std::string::npos &&
        printed.find(" = T.handle()") == std::string::npos && !structuralEqual(m, again)) {
      why = "parse(print(m)) differs from m: " + structuralDiff(m, again) + "\nfor:\n" + printed;
      return Outcome::Bad;
    }
    return Outcome::Parsed;
  } catch (const ParseError& e) {
    if (!e.span().defined() && text.find_first_not_of(" \n\t#") != std::string::npos &&
        std::string(e.what()).find("@T.prim_func") == std::string::npos) {
      why = "ParseError without a location: " + std::string(e.what()) + "\nfor:\n" + text;
      return Outcome::Bad;
    }
    return Outcome::Rejected;
  } catch (const std::exception& e) {
    why = std::string("unexpected exception: ") + e.what() + "\nfor:\n" + text;
    return Outcome::Bad;
  }
}

std::string mutate(const std::string& s, std::mt19937& rng) {
  static const std::vector<std::string> snippets = {
      "(", ")", "[", "]", ":", ",", "=", ".", "T.", "-", "+", "*", "//", "\"", "'", "#", "\n", "    ",
      "\t", "0", "1.5e", "T.grid(", "with ", "for ", "in ", "if ", "else:", "T.block(", "None", "True",
      "T.int64(", "99999999999999999999", "A", "vi", "\\", "@", "T.axis.remap(\"S\", [", "lambda", "\x01"};
  std::string t = s;
  auto pos = [&] { return t.empty() ? size_t(0) : std::uniform_int_distribution<size_t>(0, t.size() - 1)(rng); };
  int kind = std::uniform_int_distribution<int>(0, 6)(rng);
  switch (kind) {
  case 0: t.resize(pos()); break;                         // truncate
  case 1: if (!t.empty()) t.erase(pos(), 1 + rng() % 8); break;  // delete a few chars
  case 2: t.insert(pos(), snippets[rng() % snippets.size()]); break;
  case 3: if (!t.empty()) t[pos()] = static_cast<char>(32 + rng() % 95); break;
  case 4: {  // duplicate a line
    size_t a = t.rfind('\n', pos());
    a = a == std::string::npos ? 0 : a + 1;
    size_t b = t.find('\n', a);
    if (b != std::string::npos) t.insert(a, t.substr(a, b - a + 1));
    break;
  }
  case 5: {  // delete a line
    size_t a = t.rfind('\n', pos());
    a = a == std::string::npos ? 0 : a + 1;
    size_t b = t.find('\n', a);
    if (b != std::string::npos) t.erase(a, b - a + 1);
    break;
  }
  default: {  // change indentation of a line
    size_t a = t.rfind('\n', pos());
    a = a == std::string::npos ? 0 : a + 1;
    if (rng() % 2) t.insert(a, std::string(1 + rng() % 4, ' '));
    else if (a < t.size() && t[a] == ' ') t.erase(a, 1);
  }
  }
  return t;
}

}  // namespace

static int kIters = std::getenv("LOOM_FUZZ_ITERS") ? std::atoi(std::getenv("LOOM_FUZZ_ITERS")) : 4000;

class TestFuzz : public QObject {
  Q_OBJECT
private slots:
  void seedsParse() {
    for (auto& s : seeds()) {
      std::string why;
      QVERIFY2(attempt(s, why) == Outcome::Parsed, why.c_str());
    }
  }

  void everyTruncation() {
    int parsed = 0, rejected = 0;
    for (auto& s : seeds()) {
      for (size_t n = 0; n < s.size(); n += 3) {
        std::string why;
        Outcome o = attempt(s.substr(0, n), why);
        QVERIFY2(o != Outcome::Bad, why.c_str());
        (o == Outcome::Parsed ? parsed : rejected)++;
      }
    }
    QVERIFY(rejected > 100);
    QVERIFY(parsed > 0);  // cuts at statement boundaries still parse
  }

  void randomMutations() {
    std::mt19937 rng(std::getenv("LOOM_FUZZ_SEED") ? std::atoi(std::getenv("LOOM_FUZZ_SEED")) : 12345);
    auto base = seeds();
    int parsed = 0, rejected = 0;
    for (int iter = 0; iter < kIters; ++iter) {
      std::string t = base[iter % base.size()];
      int rounds = 1 + static_cast<int>(rng() % 3);
      for (int r = 0; r < rounds; ++r) t = mutate(t, rng);
      std::string why;
      Outcome o = attempt(t, why);
      QVERIFY2(o != Outcome::Bad, why.c_str());
      (o == Outcome::Parsed ? parsed : rejected)++;
    }
    QVERIFY(parsed > 50);
    QVERIFY(rejected > 1000);
  }

  void randomBytes() {
    std::mt19937 rng(7);
    for (int iter = 0; iter < 500; ++iter) {
      std::string t;
      size_t n = rng() % 200;
      for (size_t i = 0; i < n; ++i) t += static_cast<char>(rng() % 256);
      std::string why;
      QVERIFY2(attempt(t, why) != Outcome::Bad, why.c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestFuzz)
#include "test_fuzz.moc"
