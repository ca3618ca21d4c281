// The factor on the waits a test makes itself in a sanitizer build (LOOM_TEST_SLOWDOWN).
#pragma once
#include <QtGlobal>

namespace loom::test {

/// LOOM_TEST_SLOWDOWN from the environment (set by loom_scale_timeout, tests/CMakeLists.txt, in
/// sanitizer builds: 10), else 1: the factor on the waits a test makes itself, as on its CTest
/// timeout and Qt Test watchdog.
inline int testSlowdown() {
  const int s = qEnvironmentVariableIntValue("LOOM_TEST_SLOWDOWN");
  return s > 1 ? s : 1;
}

/// `ms` times testSlowdown().
inline int scaledMs(int ms) { return ms * testSlowdown(); }

}  // namespace loom::test
