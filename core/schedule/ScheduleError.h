// ScheduleError: the base of every schedule-primitive failure, and the errors shared by all
// primitives.
#pragma once
#include <string>
#include <vector>

#include "core/support/Error.h"
#include "core/tir/Function.h"

namespace loom::tir {

/// A primitive refused to apply. `fastMessage()` is one line (what the tuner logs);
/// `detailedMessage()` adds the function's IR with the offending loops/blocks marked.
/// Subclasses are declared with LOOM_DECLARE_ERROR(NameError, ScheduleError) and thrown as
/// `throw NameError("message naming the loop/block", sch.func(), {node, ...})`.
class ScheduleError : public Error {
public:
  explicit ScheduleError(std::string message, PrimFunc func = {},
                         std::vector<const IRNode*> marks = {}, Span span = {});
  const char* kind() const override { return "ScheduleError"; }
  std::string fastMessage() const override { return what(); }
  std::string detailedMessage() const override;
  const PrimFunc& func() const { return m_func; }
  const std::vector<const IRNode*>& marks() const { return m_marks; }

private:
  PrimFunc m_func;
  std::vector<const IRNode*> m_marks;
};

/// An RV that was never created by this schedule, or whose node a primitive removed.
LOOM_DECLARE_ERROR(InvalidRVError, ScheduleError);
/// No block has the requested name.
LOOM_DECLARE_ERROR(BlockNotFoundError, ScheduleError);
/// A loop or statement that should be the only child of its parent is not (fuse, reorder, ...).
LOOM_DECLARE_ERROR(NotSingleChildError, ScheduleError);
/// A block under the loop has an iter var whose type forbids the transformation (e.g. a reduce
/// iter var bound to a loop that parallel/vectorize would make concurrent).
LOOM_DECLARE_ERROR(WrongBlockIterTypeError, ScheduleError);
/// A block under the loop binds its iter vars with non-affine expressions of the loop vars.
LOOM_DECLARE_ERROR(NotAffineBindingError, ScheduleError);
/// An argument of the right type but a wrong value (negative extent, unknown thread tag, ...).
LOOM_DECLARE_ERROR(ScheduleValueError, ScheduleError);

/// The function's IR with each node of `marks` flagged (`# <-- here` on its line).
std::string printMarked(const PrimFunc& func, const std::vector<const IRNode*>& marks);

} // namespace loom::tir
