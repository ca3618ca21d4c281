// Formatting of errors and the internal-check failure path.
#include "core/support/Error.h"

namespace loom {

std::string Span::str() const {
  std::string s;
  if (file && !file->empty()) s = *file + ":";
  if (line > 0) s += std::to_string(line) + ":" + std::to_string(column);
  return s;
}

std::string Error::formatted() const {
  std::string loc = m_span.str();
  return (loc.empty() ? std::string() : loc + ": ") + "error: " + detailedMessage();
}

namespace detail {
ICheckFailure::ICheckFailure(const char* file, int line, const char* cond) {
  m_os << "internal error at " << file << ":" << line << ": check failed: " << cond << ": ";
}
ICheckFailure::~ICheckFailure() noexcept(false) { throw InternalError(m_os.str()); }
}  // namespace detail

}  // namespace loom
