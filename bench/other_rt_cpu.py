#!/usr/bin/env python3
"""CPU time that real-time processes outside a job used while the job ran (bench_tune_mpi.sh).

Usage: other_rt_cpu.py JOB_PID OUT
Samples /proc/PID/stat of every process every 0.2 s until JOB_PID exits, and writes to OUT the CPU
seconds used meanwhile by SCHED_FIFO / SCHED_RR processes that are not JOB_PID or its descendants,
then the busiest of them ("name:seconds"). A process that ends between two samples loses what it used
since the last one (up to 0.2 s), so this is a lower bound. Only /proc/PID/stat is read (it takes no lock of the
process's memory map, which a reader of /proc/PID/cmdline or status does: preempted while
holding it, such a reader stalled the bench's real-time ranks in session mpi5). Run it at a
real-time priority above the job's (chrt -f 99), or it samples only when the job leaves a CPU.
"""
import os
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def snapshot():
    procs = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                s = f.read().decode(errors="replace")
        except OSError:
            continue
        comm = s[s.index("(") + 1 : s.rindex(")")]
        rest = s[s.rindex(")") + 2 :].split()
        # rest[0] is field 3 (state): ppid 4, utime 14, stime 15, policy 41.
        procs[int(name)] = (int(rest[1]), comm, int(rest[11]) + int(rest[12]), int(rest[38]))
    return procs


def main():
    job, out = int(sys.argv[1]), sys.argv[2]
    ours = {job, os.getpid()}
    used = {}  # pid -> (comm, ticks while the job ran)
    first = {}  # pid -> its ticks at the first sample (processes started later count from 0)
    initial = True
    while True:
        procs = snapshot()
        changed = True
        while changed:  # the job's descendants (ranks, their measurement workers)
            changed = False
            for pid, (ppid, _, _, _) in procs.items():
                if ppid in ours and pid not in ours:
                    ours.add(pid)
                    changed = True
        for pid, (ppid, comm, ticks, policy) in procs.items():
            if pid in ours or policy not in (1, 2):
                continue
            first.setdefault(pid, ticks if initial else 0)
            used[pid] = (comm, ticks - first[pid])
        initial = False
        if job not in procs:
            break
        time.sleep(0.2)
    total = sum(t for _, t in used.values()) / HZ
    top = sorted(used.values(), key=lambda x: -x[1])[:3]
    with open(out, "w") as f:
        f.write("%.2f %s\n" % (total, ",".join("%s:%.1f" % (c, t / HZ) for c, t in top if t > 0) or "-"))


if __name__ == "__main__":
    main()
