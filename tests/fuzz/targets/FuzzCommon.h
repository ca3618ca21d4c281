// Shared by the fuzz targets: what counts as a clean refusal, and in-memory files for loaders
// that take a path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/support/Error.h"
#include "runtime/RuntimeFailure.h"

namespace loom::fuzz {

inline std::string bytesOf(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `body`; a typed user-facing error (loom::Error other than InternalError, the runtime's
/// RuntimeFailure) is the clean refusal bad input must get. Anything else escapes: an
/// InternalError (a LOOM_ICHECK that input reached), a std::out_of_range from .at(), a JSON
/// library exception, ... is a finding, reported by libFuzzer as a crash (uncaught exception).
template <class F>
void refusesCleanly(F&& body) {
  try {
    body();
  } catch (const loom::InternalError&) {
    throw;
  } catch (const loom::Error&) {
  } catch (const loom::runtime::RuntimeFailure&) {
  }
}

/// A file in memory (memfd) that path-based loaders can open as /proc/self/fd/N.
class MemFile {
public:
  explicit MemFile(const std::string& bytes, const char* name = "fuzz") {
    m_fd = memfd_create(name, MFD_CLOEXEC);
    if (m_fd < 0) return;
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::write(m_fd, bytes.data() + off, bytes.size() - off);
      if (n <= 0) break;
      off += size_t(n);
    }
    m_path = "/proc/self/fd/" + std::to_string(m_fd);
  }
  ~MemFile() {
    if (m_fd >= 0) ::close(m_fd);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  bool ok() const { return m_fd >= 0; }
  const std::string& path() const { return m_path; }

private:
  int m_fd = -1;
  std::string m_path;
};

} // namespace loom::fuzz
