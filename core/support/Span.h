// A source location range (file, line, column) that IR nodes and errors carry.
#pragma once
#include <memory>
#include <string>

namespace loom {

/// Lines and columns count from 1; a default Span (line 0) means "no location".
struct Span {
  std::shared_ptr<const std::string> file;
  int line = 0, column = 0;
  int endLine = 0, endColumn = 0;

  bool defined() const { return line > 0; }
  std::string fileName() const { return file ? *file : std::string(); }
  /// "file:line:col" (or "line:col" when no file is known).
  std::string str() const;
};

}  // namespace loom
