// How long the Studio's GUI tests wait for a worker's result (a model load, an export, a tuning run).
#pragma once

namespace loom::studiotest {

/// The bound of one wait for work done off the UI thread or in a worker process. Generous: CI
/// runs on a loaded 2-core machine where a small model's export or tuning run took 40 s and more.
/// Every such wait ends as soon as its event (a signal, a state) arrives, so on a quiet machine
/// the tests take as long as the work. tests/studio/CMakeLists.txt raises Qt Test's per-function
/// watchdog (QTEST_FUNCTION_TIMEOUT) above a few of these.
constexpr int kWorkerWaitMs = 300000;

}  // namespace loom::studiotest
