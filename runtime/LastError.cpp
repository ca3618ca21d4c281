// The thread-local last-error message behind loom_set_last_error / loom_get_last_error.
#include "runtime/LastError.h"

#include "loom/c_runtime_api.h"

namespace loom::runtime {
namespace {
thread_local std::string t_lastError;
}

void setLastError(const std::string& message) { t_lastError = message; }
void clearLastError() { t_lastError.clear(); }
const std::string& lastError() { return t_lastError; }

}  // namespace loom::runtime

extern "C" {

void loom_set_last_error(const char* msg) { loom::runtime::t_lastError = msg ? msg : ""; }

const char* loom_get_last_error(void) { return loom::runtime::t_lastError.c_str(); }

}  // extern "C"
