// RuntimeFailure: the exception every runtime failure throws (a bad call, a missing library, a failed task).
#pragma once
#include <stdexcept>
#include <string>

namespace loom::runtime {

/// Thrown by the runtime's C++ API; the C API turns it into -1 and loom_get_last_error().
/// Derives from std::runtime_error, so callers that catch that keep working.
class RuntimeFailure : public std::runtime_error {
public:
  explicit RuntimeFailure(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace loom::runtime
