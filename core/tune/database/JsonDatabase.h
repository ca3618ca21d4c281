// A Database kept as a JSON-lines file (one TuningRecord per line), appended as records arrive.
#pragma once
#include <string>
#include <vector>

#include "core/tune/Database.h"

namespace loom::tune {

class JsonDatabase : public Database {
public:
  /// Opens `path`, loading its records when it exists (`truncate`: start it empty instead).
  /// Throws ParseError "R.json:LINE: ..." for a malformed line, except a last line cut short by
  /// an interrupted write (no final newline), which is dropped; RecordFileError when it cannot be read.
  explicit JsonDatabase(std::string path, bool truncate = false);
  /// An in-memory database (commit keeps records without writing a file).
  JsonDatabase() = default;

  void commit(const TuningRecord& r) override;
  std::vector<TuningRecord> records(const std::string& workload,
                                    const std::string& target) const override;
  const std::vector<TuningRecord>& all() const override { return m_records; }
  const std::string& path() const { return m_path; }

private:
  std::string m_path;
  std::vector<TuningRecord> m_records;
};

} // namespace loom::tune
