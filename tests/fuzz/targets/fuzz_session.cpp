// Fuzz target: the Studio's session files (.loomsession), read and checked without Qt by
// driver::parseSessionFile (core/driver/SessionFile.h), which views/ (MainWindow::loadSession,
// Session::restore) calls: a parsed session or a SessionFileError naming the key. A fused group's
// TIR text is then parsed as Session::restore does (a ParseError there is the Studio's clean
// refusal: it logs it and keeps the rest).
#include "FuzzCommon.h"
#include "core/driver/SessionFile.h"
#include "core/tir/Parser.h"

using namespace loom;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return -1;
  driver::SessionFile s;
  try {
    s = driver::parseSessionFile(fuzz::bytesOf(data, size), "fuzz.loomsession");
  } catch (const driver::SessionFileError&) {
    return 0;
  }
  if (s.workspace.group)
    fuzz::refusesCleanly([&] { (void)tir::parseFunc(s.workspace.group->tir, s.workspace.group->name + ".tir"); });
  return 0;
}
