// The Studio's session file (.loomsession, JSON) read and checked without Qt: the workspace
// (preset or fused group, schedule, target, model, input shapes, symbolic dims, runs) and what the
// window keeps beside it. views/ (MainWindow::loadSession, Session::restore) reads session files
// only through parseSessionFile; the fuzz target fuzz_session fuzzes it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/support/Error.h"

namespace loom::driver {

/// A session file that is not JSON, not a Loom session, or holds a value of the wrong kind. The
/// message names the file, the key ("workspace.runs[2].medianMs") and what was wrong.
LOOM_DECLARE_ERROR(SessionFileError, Error);

/// One row of the Runs table (views' RunRecord without the Qt types).
struct SessionRun {
  int id = 0;
  int version = 0;  ///< the schedule's version number
  std::string preset, target, schedule, lowered, error, reference, device, model, assembly;
  bool ok = false, correct = false, flopsKnown = true;
  double maxRelError = 0, medianMs = 0, minMs = 0, maxMs = 0, gflops = 0, peak = 0, defaultMs = 0;
  int repeats = 0, callsPerRepeat = 0;
};

/// A fused group's kernel under the editor (kept as TIR text; the Studio parses it).
struct SessionGroup {
  std::string name, tir;
  int numInputs = 0;
  double flops = 0;
};

/// The "workspace" object (views' Session::toJson). Absent keys take these defaults, as an older
/// Studio's files lack some.
struct SessionWorkspace {
  std::string preset = "matmul";
  std::map<std::string, int64_t> params;
  std::string schedule;
  std::string target = "llvm";
  std::optional<SessionGroup> group;
  std::string model;  ///< the model's path, empty when none was open
  std::string modelLayout = "NCHWc";
  /// Concrete shapes by input name; a dim without a value is 0.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// The inputs whose dims stay symbolic, in --input-shapes grammar ("x:[1,3,48,W<=2048]");
  /// checked with parseInputShapes.
  std::string symbolicInputShapes;
  std::vector<SessionRun> runs;
};

struct SessionFile {
  SessionWorkspace workspace;
  std::string layout;  ///< the window's dock layout (base64 of QMainWindow::saveState)
  /// The tuning dock's form and results and the profile dock's history, as JSON text (an object,
  /// an object, an array; empty when absent): read by those docks.
  std::string tuningForm, tuningResults, profiles;
  std::optional<bool> dark;
  /// Autosaves only: the session file they are of, the editor's text, when they were written.
  std::string autosaveOf, editorText, autosavedAt;
};

/// Parses and checks a session file's bytes; `file` names it in errors. Unknown keys are ignored
/// (a newer Studio's files open in an older one). SessionFileError on anything else.
SessionFile parseSessionFile(const std::string& bytes, const std::string& file);

/// The workspace object alone, from its JSON text (`where` names it in errors).
SessionWorkspace parseSessionWorkspace(const std::string& json, const std::string& where);

}  // namespace loom::driver
