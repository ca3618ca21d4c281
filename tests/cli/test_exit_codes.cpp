// The exit-code policy of every `loom` subcommand (app/cli/Commands.cpp's runSelected): 0 ok, 1 for a
// loom::Error (the user's problem), 2 for an internal error (InternalError or any other exception).
#include <QtTest>

#include <iostream>
#include <sstream>

#include "app/cli/Commands.h"
#include "core/support/Error.h"

using namespace loom;

namespace {

/// What the fake subcommand does when run.
std::function<int()>& behaviour() {
  static std::function<int()> f;
  return f;
}

const bool registered = cli::addCommand({[](CLI::App& app) { return app.add_subcommand("fake", "a test command"); },
                                         [] { return behaviour()(); }});

/// Runs `loom fake` with `body`; returns the exit code and what went to stderr.
std::pair<int, QString> runFake(std::function<int()> body) {
  behaviour() = std::move(body);
  CLI::App app{"loom"};
  cli::registerCommands(app);
  const char* argv[] = {"loom", "fake"};
  app.parse(2, const_cast<char**>(argv));
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  int code = cli::runSelected(app);
  std::cerr.rdbuf(old);
  return {code, QString::fromStdString(err.str())};
}

}  // namespace

class TestExitCodes : public QObject {
  Q_OBJECT

private slots:
  void policy() {
    QVERIFY(registered);
    auto [ok, okErr] = runFake([] { return 0; });
    QCOMPARE(ok, 0);
    QVERIFY(okErr.isEmpty());
    // A subcommand's own "cannot run" answer (e.g. `loom inspect` of a damaged package) passes through.
    QCOMPARE(runFake([] { return 1; }).first, 1);

    auto [user, userErr] = runFake([]() -> int { LOOM_THROW(ValueError) << "--output 'x.zip': name it NAME.so"; });
    QCOMPARE(user, 1);
    QVERIFY2(userErr.contains("error: --output 'x.zip': name it NAME.so") && !userErr.contains("internal"),
             qPrintable(userErr));

    auto [check, checkErr] = runFake([]() -> int {
      LOOM_ICHECK(1 + 1 == 3) << "arithmetic broke";
      return 0;
    });
    QCOMPARE(check, 2);
    QVERIFY2(checkErr.contains("loom: internal error:") && checkErr.contains("arithmetic broke"), qPrintable(checkErr));

    auto [other, otherErr] = runFake([]() -> int { throw std::runtime_error("unexpected"); });
    QCOMPARE(other, 2);
    QVERIFY2(otherErr.contains("loom: internal error: unexpected"), qPrintable(otherErr));
  }
};

QTEST_APPLESS_MAIN(TestExitCodes)
#include "test_exit_codes.moc"
