#!/usr/bin/env python3
"""The fraction of the machine's peak that each kernel family of a model reaches (issue #17).

Runs `loom profile MODEL --measure-machine --json` (the machine's fp32 FMA peak and copy bandwidth
measured in the same run, LOOM_NUM_THREADS threads) and `loom compile MODEL --dump-code tir`, sorts
the conv kernels into families by their scheduled signature (the blocked weight's shape: a
depthwise conv reads one input channel per output channel, a 1x1 conv a 1x1 window; the stride
from the input's index; 3 or fewer input channels: a stem), and prints per family the GFLOP/s,
the % of the FMA peak, the FLOP per byte, the GB/s (the kernel's arguments read and written once:
a lower bound on its traffic) and the % of the copy bandwidth. Kernels that are not convs are
grouped by their first op.
Usage: peak_by_family.py --loom BUILD/bin/loom [--threads 1] [--repeat 20] MODEL.onnx
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def families(tir_text):
    """kernel name -> family, from the scheduled TIR of each kernel."""
    out = {}
    for block in tir_text.split("# kernel ")[1:]:
        name = block.split(" ", 1)[0].strip()
        sig = re.search(r"def " + re.escape(name) + r"\((.*?)\):", block)
        if not sig:
            continue
        bufs = re.findall(r"(\w+): T\.Buffer\(\(([^)]*)\)", sig.group(1))
        if "conv2d" not in name or len(bufs) < 2:
            out[name] = re.sub(r"^fused_", "", name).split("_")[0] + (
                "_" + re.sub(r"^fused_", "", name).split("_")[1] if name.startswith("fused_nn_") else "")
            continue
        if "winograd" in name:
            out[name] = "Winograd 3x3 conv"
            continue
        # The weight: the 6-D buffer (O/ob, I/ib, R, S, ib, ob); the residual of a fused add may
        # come before the data.
        shapes = [[d.strip() for d in b[1].split(",") if d.strip()] for b in bufs]
        weight = next((w for w in shapes if len(w) == 6 and all(d.isdigit() for d in w)), None)
        if weight is None:
            out[name] = "conv (NCHW or other layout)"
            continue
        _, ic_blocks, r, s, ib, _ = (int(d) for d in weight)
        stride = 2 if re.search(r"v_i[23]\w* \* 2 \+", block) else 1
        in_channels = ic_blocks * ib
        if ic_blocks == 1 and ib == 1:
            fam = f"depthwise {r}x{s}, stride {stride}"
        elif in_channels <= 4:
            fam = f"stem {r}x{s}, stride {stride} ({in_channels} input channels)"
        elif r == 1 and s == 1:
            fam = "1x1 conv" + (", stride 2" if stride == 2 else "")
        else:
            fam = f"{r}x{s} conv, stride {stride}"
        out[name] = fam
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("model")
    args = ap.parse_args()
    env = dict(os.environ, LOOM_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as tmp:
        prof = os.path.join(tmp, "profile.json")
        subprocess.run([args.loom, "profile", "-q", args.model, "--measure-machine", "--repeat", str(args.repeat),
                        "--json", prof], env=env, check=True, stdout=subprocess.DEVNULL)
        so = os.path.join(tmp, "m.so")
        subprocess.run([args.loom, "compile", "-q", args.model, "--dump-code", "tir", "-o", so], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(tmp, "m.tir")) as f:
            fam = families(f.read())
        with open(prof) as f:
            p = json.load(f)
    peak, bw = p["machine"]["fma_peak_gflops"], p["machine"]["copy_bandwidth_gbs"]
    rows = {}
    for k in p["kernels"]:
        if not k["flops"] and "conv" not in k["name"]:
            continue
        ms = k["total_ms"] / max(1, k["calls"])
        r = rows.setdefault(fam.get(k["name"], k["name"]), [])
        r.append((k["flops"] / ms / 1e6 if ms else 0.0, k["bytes"] / ms / 1e6 if ms else 0.0,
                  k["flops"] / k["bytes"] if k["bytes"] else 0.0, k["total_ms"]))
    print(f"{os.path.basename(os.path.dirname(os.path.abspath(args.model)))}: {p['median_ms']:.3f} ms median, "
          f"{args.threads} thread(s); machine measured in the same run: {peak:.1f} GFLOP/s fp32 FMA peak, "
          f"{bw:.1f} GB/s copy bandwidth")
    print("| family | kernels | ms in all | GFLOP/s | % of FMA peak | FLOP/B | GB/s (lower bound) | % of copy bandwidth |")
    print("|---|---|---|---|---|---|---|---|")
    rng = lambda v, f="{:.0f}": f.format(min(v)) if f.format(min(v)) == f.format(max(v)) else f.format(min(v)) + "-" + f.format(max(v))
    for name, r in sorted(rows.items(), key=lambda kv: -sum(x[3] for x in kv[1])):
        gf, gb, ai = [x[0] for x in r], [x[1] for x in r], [x[2] for x in r]
        print(f"| {name} | {len(r)} | {sum(x[3] for x in r):.2f} | {rng(gf)} | {rng([100 * g / peak for g in gf])} | "
              f"{rng(ai, '{:.1f}')} | {rng(gb, '{:.1f}')} | {rng([100 * g / bw for g in gb])} |")
    print("(GB/s counts each argument once; data that stays in cache between kernels can pass the copy bandwidth)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
