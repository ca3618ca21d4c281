// writeFileAtomically: temporary file in the same directory, fsync, rename.
#include "runtime/AtomicFile.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/RuntimeFailure.h"

namespace loom::runtime {

namespace {

std::string dirOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The process's umask, read without changing it (umask(2) would race with other threads).
mode_t currentUmask() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Umask:", 0) == 0) return mode_t(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

}  // namespace

void writeFileAtomically(const std::string& path, std::string_view bytes) {
  struct stat old {};
  bool existed = ::stat(path.c_str(), &old) == 0;
  auto fail = [&](const std::string& what, int err) {
    throw RuntimeFailure("cannot write '" + path + "': " + what + ": " + std::strerror(err) +
                         (existed ? " (the previous file is unchanged)" : " (no file was written)"));
  };
  if (path.empty() || path.back() == '/') throw RuntimeFailure("cannot write '" + path + "': not a file name");
  std::string dir = dirOf(path);
  std::string tmp = (dir == "/" ? "" : dir) + "/." + baseOf(path) + ".XXXXXX.tmp";
  int fd = ::mkstemps(tmp.data(), 4);
  if (fd < 0) fail("cannot create a temporary file in '" + dir + "'", errno);
  auto abandon = [&](const std::string& what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(what, err);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) abandon("writing failed after " + std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes", errno);
    if (n == 0) abandon("writing failed after " + std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes", ENOSPC);
    done += size_t(n);
  }
  mode_t mode = 0644;
  if (existed) {
    mode = old.st_mode & 07777;
  } else {
    mode &= ~currentUmask();
  }
  if (::fchmod(fd, mode) != 0) abandon("setting the file mode failed", errno);
  if (::fsync(fd) != 0) abandon("flushing to the disk failed", errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("closing failed", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("renaming the temporary file '" + tmp + "' failed", err);
  }
  // Make the rename itself durable (best effort: some file systems refuse fsync on a directory).
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace loom::runtime
