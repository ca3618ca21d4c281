#!/usr/bin/env python3
"""CPU time that real-time processes outside a job used while the job ran (bench_tune_mpi.sh).

Usage: other_rt_cpu.py JOB_PID OUT
Samples /proc/PID/stat of every process every 0.2 s until JOB_PID exits, and writes to OUT the CPU
seconds used meanwhile by SCHED_FIFO / SCHED_RR processes that are not JOB_PID or its descendants,
then the busiest of them by name ("name:seconds"). A real-time process's children that ended and
were waited for count through its reaped time (cutime, cstime): a harness at real-time priority that
runs short benchmarks one after another. A process that ends between two samples and whose parent
is not a real-time process loses what it used since the last one (up to 0.2 s): a lower bound. It
covers mpirun's whole life, start-up included. Only /proc/PID/stat is read (it takes no lock of the
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
        # rest[0] is field 3 (state): ppid 4, utime 14, stime 15, cutime 16, cstime 17, policy 41.
        own = int(rest[11]) + int(rest[12])
        reaped = int(rest[13]) + int(rest[14])  # children that ended and were waited for
        procs[int(name)] = (int(rest[1]), comm, own, reaped, int(rest[38]))
    return procs


def main():
    job, out = int(sys.argv[1]), sys.argv[2]
    ours = {job, os.getpid()}
    seen = {}  # pid -> [ppid, comm, own ticks at the first sample (0 if started later), own now, reaped first, reaped now]
    initial = True
    while True:
        procs = snapshot()
        changed = True
        while changed:  # the job's descendants (ranks, their measurement workers)
            changed = False
            for pid, p in procs.items():
                if p[0] in ours and pid not in ours:
                    ours.add(pid)
                    changed = True
        for pid, (ppid, comm, own, reaped, policy) in procs.items():
            if pid in ours or policy not in (1, 2):
                continue
            e = seen.setdefault(pid, [ppid, comm, own if initial else 0, own, reaped if initial else 0, reaped])
            e[3], e[5] = own, reaped
        # A real-time process that ended: when its parent is a real-time process too, its whole
        # life comes back in the parent's reaped time, so it is not counted on its own.
        for pid in [p for p in seen if p not in procs]:
            if seen[pid][0] in seen:
                del seen[pid]
        initial = False
        if job not in procs:
            break
        time.sleep(0.2)
    used = {}
    for pid, (ppid, comm, own0, own, reaped0, reaped) in seen.items():
        used[comm] = used.get(comm, 0) + (own - own0) + (reaped - reaped0)
    total = sum(used.values()) / HZ
    top = sorted(used.items(), key=lambda x: -x[1])[:3]
    with open(out, "w") as f:
        f.write("%.2f %s\n" % (total, ",".join("%s:%.1f" % (c, t / HZ) for c, t in top if t > 0) or "-"))


if __name__ == "__main__":
    main()
