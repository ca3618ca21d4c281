#!/usr/bin/env python3
"""Runs bench_peak several times and writes bench/machine.json: the best of each figure (a peak is
a maximum; other processes only ever lower it), with the load average and time of the runs.
Usage: bench/record_machine.py BUILD_DIR [RUNS]"""
import datetime
import json
import os
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
here = os.path.dirname(os.path.abspath(__file__))
exe = os.path.join(build, "bin", "bench_peak")
best, loads = {}, []
for _ in range(runs):
    loads.append(os.getloadavg()[0])
    out = json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)
    for k, v in out.items():
        best[k] = max(best.get(k, v), v)
    loads.append(os.getloadavg()[0])
best["runs"] = runs
best["statistic"] = "best of the runs"
best["load_average_1min"] = {"min": round(min(loads), 2), "max": round(max(loads), 2)}
best["recorded_utc"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
best["cpu"] = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
busy = max(loads) >= 1.0
best["note"] = ("shared 2-core VM; other jobs were running (see load_average_1min), so these are "
                "lower bounds of the quiet machine's figures" if busy else
                "shared 2-core VM, quiet while recording (load average below 1); still a VM whose "
                "neighbours can take memory bandwidth and turbo headroom")
with open(os.path.join(here, "machine.json"), "w") as f:
    json.dump(best, f, indent=2)
    f.write("\n")
print(json.dumps(best, indent=2))
