// Fuzz target: the TVMScript parser, and print -> parse -> print as a fixed point for whatever
// parses (a printed function that does not parse back, or prints differently, is a finding).
#include <cstdio>
#include <cstdlib>

#include "FuzzCommon.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"

using namespace loom;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return -1;
  std::string text = fuzz::bytesOf(data, size);
  tir::IRModule mod;
  try {
    mod = tir::parseModule(text, "fuzz.py");
  } catch (const InternalError&) {
    throw;
  } catch (const Error&) {
    return 0;
  }
  std::string printed = tir::printModule(mod);
  tir::IRModule again;
  try {
    again = tir::parseModule(printed, "printed.py");
  } catch (const Error& e) {
    std::fprintf(stderr, "printed module does not parse back: %s\n--- printed:\n%s\n", e.what(), printed.c_str());
    std::abort();
  }
  std::string printedAgain = tir::printModule(again);
  if (printedAgain != printed) {
    std::fprintf(stderr, "print -> parse -> print is not a fixed point\n--- first:\n%s\n--- second:\n%s\n",
                 printed.c_str(), printedAgain.c_str());
    std::abort();
  }
  if (!tir::structuralEqual(mod, again)) {
    std::fprintf(stderr, "the reparsed module differs structurally:\n%s\n", tir::structuralDiff(mod, again).c_str());
    std::abort();
  }
  return 0;
}
