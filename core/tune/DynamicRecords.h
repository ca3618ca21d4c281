// Tuning a dynamic model at a representative shape (issue #18): the records of the model's
// kernels at that static shape, re-keyed to the kernels of the symbolic model, so that
// `loom compile --tuning-records` on the symbolic model finds them.
#pragma once
#include <string>
#include <vector>

#include "core/driver/CompileModel.h"
#include "core/graph/Expr.h"
#include "core/tune/Database.h"

namespace loom::tune {

struct DynamicRecordSummary {
  int kernels = 0;   ///< kernels of the symbolic model
  int aliased = 0;   ///< whose static twin's best record (and default measurement) now also
                     ///< stands under the symbolic kernel's key
  std::vector<std::string> notes;  ///< why the others were not (no record, the trace does not apply, ...)
};

/// The mapping: a record's key is the structural hash of its kernel, and a symbolic kernel
/// (extents over symbols, the symbols as trailing params) never hashes like the kernel of one
/// shape. So after tuning `representative` (the model at the representative shape), each kernel
/// of `dynamic` (the same model with its symbolic dims; both from driver::extractGroups with
/// `options`, paired in order, their op lists equal) gets copies of its twin's best record and of
/// the latest default-schedule measurement (baselineKey) under its own key (groupKey), when the
/// record's trace replays on the symbolic kernel (splits of a symbolic loop get a guarded tail).
/// The times are those measured at the representative shape: chooseRecord then picks the record
/// for every shape exactly when it beat the default there. A model whose two kernel lists do not
/// pair (another count, other ops) gets no aliases and a note saying so.
DynamicRecordSummary aliasDynamicRecords(Database& db, const graph::Module& dynamic, const graph::Module& representative,
                                         const driver::CompileModelOptions& options, const std::string& target);

}  // namespace loom::tune
