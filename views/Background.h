// Worker threads of the Studio yield to the UI thread: their scheduling priority is lowered.
#pragma once

namespace loom::views {

/// Lowers the calling thread's priority (Linux: its nice value +4, once per thread) so that the
/// UI thread of this process wins the CPU over layouts, imports and compiles on a busy machine.
/// Not for threads that time kernels. Does nothing where threads have no priority of their own.
void yieldToUiThread();

}  // namespace loom::views
