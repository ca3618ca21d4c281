// JsonDatabase: load, append, query a JSON-lines record file.
#include "core/tune/database/JsonDatabase.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <fstream>
#include <unistd.h>
#include <sstream>

#include "core/support/Error.h"

namespace loom::tune {

JsonDatabase::JsonDatabase(std::string path, bool truncate) : m_path(std::move(path)) {
  if (truncate) {
    std::ofstream out(m_path, std::ios::trunc);
    if (!out) LOOM_THROW(tune::RecordFileError) << m_path << ": cannot create the tuning record file";
    return;
  }
  std::ifstream in(m_path, std::ios::binary);
  if (!in) return; // a new file
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  size_t pos = 0;
  int lineNo = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool complete = nl != std::string::npos;
    std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
    pos = complete ? nl + 1 : text.size();
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      if (!complete) break; // cut short by an interrupted append
      LOOM_THROW(ParseError) << m_path << ":" << lineNo << ": not a JSON tuning record";
    }
    try {
      m_records.push_back(TuningRecord::fromJson(j));
    } catch (const ParseError& e) {
      LOOM_THROW(ParseError) << m_path << ":" << lineNo << ": " << e.what();
    }
  }
}

void JsonDatabase::commit(const TuningRecord& r) {
  m_records.push_back(r);
  if (m_path.empty()) return;
  // One write() of the whole line on an O_APPEND descriptor: a run killed mid-way (e.g. an MPI
  // job ended because a rank died) leaves whole lines, never half a record.
  std::string line = r.toJson().dump() + "\n";
  int fd = ::open(m_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    LOOM_THROW(tune::RecordFileError) << m_path << ": cannot append to the tuning record file: " << std::strerror(errno);
  struct stat before {};
  bool sized = ::fstat(fd, &before) == 0;
  // Write until done or refused: a short write (the disk or the file size limit is full) is
  // followed by one that fails and says why.
  size_t done = 0;
  int err = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += size_t(n);
  }
  if (done == line.size()) {
    ::close(fd);
    return;
  }
  // A full disk cut the line short: take the partial line back off, so the file ends with the
  // last whole record and later appends (after space is freed) do not follow half a line.
  // Only when those bytes are still the file's last (no other process appended meanwhile).
  struct stat after {};
  if (done > 0 && sized && ::fstat(fd, &after) == 0 && after.st_size == before.st_size + off_t(done))
    (void)!::ftruncate(fd, before.st_size);
  ::close(fd);
  LOOM_THROW(tune::RecordFileError) << m_path << ": writing a tuning record failed: " << std::strerror(err)
                                    << " (the records before it are intact)";
}

std::vector<TuningRecord> JsonDatabase::records(const std::string& workload,
                                                const std::string& target) const {
  std::vector<TuningRecord> out;
  for (auto& r : m_records)
    if (r.workload == workload && r.target == target) out.push_back(r);
  return out;
}

} // namespace loom::tune
