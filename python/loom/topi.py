"""Loom's workload presets (``loom lower --list-workloads``) as PrimFuncs."""
from . import _ffi


def workload(spec):
    """The PrimFunc of a preset: ``workload("matmul:M=64,N=64,K=64")``."""
    return _ffi.workload(spec)
