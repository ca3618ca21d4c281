// LastError: the thread-local error message of the C API, and the guard that turns exceptions into it.
#pragma once
#include <exception>
#include <string>

namespace loom::runtime {

void setLastError(const std::string& message);
void clearLastError();
/// This thread's last error ("" when none).
const std::string& lastError();

/// Runs `body` (which returns int, 0 for success) for a C entry point: a C++ exception becomes
/// -1 with its message as the last error.
template <class F> int guardCall(const char* where, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    setLastError(std::string(where) + ": " + e.what());
  } catch (...) {
    setLastError(std::string(where) + ": unknown C++ exception");
  }
  return -1;
}

}  // namespace loom::runtime
