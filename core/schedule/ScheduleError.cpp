// ScheduleError's messages, and the compact IR listing with the offending loops/blocks marked.
#include "core/schedule/ScheduleError.h"

#include <set>
#include <sstream>

#include "core/tir/Printer.h"

namespace loom::tir {

ScheduleError::ScheduleError(std::string message, PrimFunc func, std::vector<const IRNode*> marks,
                             Span span)
    : Error(std::move(message), std::move(span)), m_func(std::move(func)),
      m_marks(std::move(marks)) {}

std::string ScheduleError::detailedMessage() const {
  std::string s = what();
  if (m_func.defined()) s += "\n" + printMarked(m_func, m_marks);
  return s;
}

std::string printMarked(const PrimFunc& func, const std::vector<const IRNode*>& marks) {
  PrintResult printed = printWithMap(func);
  // Lines to underline: the first printed line of every marked statement.
  std::set<int> marked;
  for (const IRNode* m : marks) {
    auto* s = dynamic_cast<const StmtNode*>(m);
    if (!s) continue;
    LineRange r = printed.linesOf(Stmt(s));
    if (r.valid()) marked.insert(r.first);
  }
  std::istringstream in(printed.text);
  std::string out, line;
  for (int no = 1; std::getline(in, line); ++no) {
    out += line + "\n";
    if (!marked.count(no)) continue;
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    out += std::string(indent, ' ') + std::string(line.size() - indent, '^') + "\n";
  }
  return out;
}

} // namespace loom::tir
