#!/usr/bin/env python3
"""PyTorch's times for the operators and models bench/gpu/device_run.sh runs through Loom, on the
same GPU in the same call: the reference side of each ratio. fp32 throughout; matmul and conv
both with TF32 off (the arithmetic Loom's kernels do) and on (cuBLAS / cuDNN's default fast path
for conv). Times are CUDA-event medians after a warm-up. Prints one line per case.

Usage: torch_ref.py [--models DIR ...]   (model names are torchvision's: resnet18, mobilenet_v2)
"""
import argparse
import statistics
import sys
import time

import torch


def median_ms(fn, warmup=10, repeat=50):
    """Median and min of CUDA-event times, and the median host time of call + synchronize (how
    `loom bench-op` and bench_model_gpu time a run, launch and sync included)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times, host = [], []
    for _ in range(repeat):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        host.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times), statistics.median(host)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--matmul", nargs="*", type=int, default=[256, 1024, 4096])
    ap.add_argument("--models", nargs="*", default=["mobilenet_v2", "resnet18"])
    args = ap.parse_args()
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        mode = "tf32" if tf32 else "fp32"
        for n in args.matmul:
            a = torch.randn(n, n, device=dev)
            b = torch.randn(n, n, device=dev)
            c = torch.empty(n, n, device=dev)
            med, best, host = median_ms(lambda: torch.matmul(a, b, out=c))
            print(f"torch matmul {n}^3 {mode}: median {med:.4f} ms min {best:.4f} ms, {2 * n**3 / med / 1e6:.1f} GFLOP/s;"
                  f" host-timed median {host:.4f} ms, {2 * n**3 / host / 1e6:.1f} GFLOP/s")
        x = torch.randn(1, 64, 56, 56, device=dev)
        w = torch.randn(64, 64, 3, 3, device=dev)
        med, best, host = median_ms(lambda: torch.nn.functional.conv2d(x, w, padding=1))
        flops = 2 * 64 * 56 * 56 * 64 * 9
        print(f"torch conv2d N1 C64 H56 W56 K64 3x3 {mode}: median {med:.4f} ms min {best:.4f} ms, {flops / med / 1e6:.1f} GFLOP/s;"
              f" host-timed median {host:.4f} ms, {flops / host / 1e6:.1f} GFLOP/s")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        import torchvision
    except ImportError as e:
        print("no torchvision:", e)
        return 0
    for name in args.models:
        model = getattr(torchvision.models, name)(weights=None).eval().to(dev)
        x = torch.randn(1, 3, 224, 224, device=dev)
        with torch.no_grad():
            med, best, host = median_ms(lambda: model(x), warmup=5, repeat=30)
        print(f"torch model {name} batch 1 fp32 (eager): median {med:.3f} ms min {best:.3f} ms; host-timed median {host:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
