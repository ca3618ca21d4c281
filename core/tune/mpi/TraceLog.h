// TraceLog: per-rank timestamps of MPI traffic and of the ranks' phases, for finding out what waits
// on what in a distributed run (LOOM_TUNE_MPI_TRACE=DIR). Internal to core/tune/mpi.
#pragma once
#include <cstdint>
#include <string>

namespace loom::tune::mpi::trace {

/// Starts recording when LOOM_TUNE_MPI_TRACE names a directory (once per process, before the
/// threads that record start). Events go to memory (no I/O while the run lasts) and are written
/// to DIR/rank-R.log by flush().
void open(int rank);
bool on();
/// One event of the calling thread: CLOCK_MONOTONIC ns (the clock of the kernel's trace_clock
/// "mono", so a sched_switch trace lines up), the thread's id, its CPU time and its run-queue
/// wait so far (/proc/thread-self/schedstat: time runnable but not running), `what` (a string
/// literal) and two numbers. Costs a clock read and a pread of schedstat when on; nothing when off.
void event(const char* what, int64_t a = 0, int64_t b = 0);
/// Writes the events, one line each: "t_ns tid cpu_ns runq_ns what a b".
void flush();

} // namespace loom::tune::mpi::trace
