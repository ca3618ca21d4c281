# Every schedule primitive through Python gives the same program and the same trace as the C++
# schedule script run by the CLI (`loom lower ... -s script.py --emit tir|trace`). Each case's
# script is plain Python over the `sch` object, so it runs unchanged through loom.tir.Schedule.
import os
import re
import subprocess

import pytest

import loom
from loom import te
from conftest import LOOM_CLI, REPO

EX = os.path.join(REPO, "examples", "schedules")


def _elementwise_chain():
    A = te.placeholder((16, 24), name="A")
    B = te.compute((16, 24), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((16, 24), lambda i, j: B[i, j] + 1.0, name="C")
    return te.create_prim_func([A, C])


CASES = {
    # name: (workload spec or a function making the PrimFunc, script file or text, CLI extra args)
    "matmul_tiled": ("matmul:M=64,N=64,K=64", os.path.join(EX, "matmul_tiled.py"), []),
    "matmul_x86": ("matmul:M=128,N=128,K=128", os.path.join(EX, "matmul_x86.py"), []),
    "matmul_tensorize": ("matmul:M=64,N=64,K=64", os.path.join(EX, "matmul_tensorize_avx512.py"), []),
    "conv2d_cache_compute_at": ("conv2d:N=1,C=16,H=28,W=28,K=32,R=3,S=3",
                                os.path.join(EX, "conv2d_cache_compute_at.py"), []),
    "conv2d_x86": ("conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,pad=1,stride=1", os.path.join(EX, "conv2d_x86.py"), []),
    "softmax_inline": ("softmax:M=32,N=32", os.path.join(EX, "softmax_inline.py"), []),
    "rfactor": ("reduce_sum:M=16,N=256", os.path.join(EX, "rfactor_reduce.py"), []),
    "sampling_annotate": ("matmul:M=30,N=30,K=16", """
b = sch.get_block("C")
i, j, k = sch.get_loops(b)
t = sch.sample_perfect_tile(i, n=2, max_innermost_factor=8)
io, ii = sch.split(i, factors=t)
c = sch.sample_categorical(candidates=[1, 2, 4], probs=[0.25, 0.25, 0.5])
sch.annotate(io, "pragma_auto_unroll_max_step", c)
sch.annotate(b, "meta_schedule.tiling_structure", "SSRSRS")
sch.unannotate(b, "meta_schedule.tiling_structure")
u = sch.add_unit_loop(b)
kids = sch.get_child_blocks(io)
jo, ji = sch.split(j, factors=[None, 5], preserve_unit_iters=False)
f = sch.fuse(jo, ji)
sch.unroll(f)
""", []),
    "pad_einsum_producers": ("matmul:M=30,N=30,K=16", """
b = sch.get_block("C")
prod = sch.get_producers(b)
cons = sch.get_consumers(b)
sch.pad_einsum(b, [32, 32, 1])
""", []),
    "compute_location_sampled": ("softmax:M=16,N=16", """
b = sch.get_block("T_softmax_maxelem")
loop = sch.sample_compute_location(b)
sch.compute_at(b, loop)
n = sch.get_block("T_softmax_norm")
i, j = sch.get_loops(n)
sch.vectorize(j)
""", []),
    "bind_gpu": ("add:M=32,N=32", """
b = sch.get_block("T_add")
i, j = sch.get_loops(b)
sch.bind(i, "blockIdx.x")
sch.bind(j, "threadIdx.x")
""", ["--target", "cuda"]),
    "blockize": ("matmul:M=32,N=32,K=16", """
b = sch.get_block("C")
i, j, k = sch.get_loops(b)
jo, ji = sch.split(j, factors=[None, 16])
sch.reorder(i, jo, k, ji)
bo = sch.blockize(k)
""", []),
    "reverse_compute_inline_cache_read": (_elementwise_chain, """
c = sch.get_block("C")
sch.reverse_compute_inline(c)
b = sch.get_block("B")
r = sch.cache_read(b, 0, "local")
sch.set_scope(r, 0, "global")
""", []),
    "transform_layout_lambda": ("matmul:M=32,N=32,K=32", """
b = sch.get_block("C")
sch.transform_layout(b, ("read", 1), lambda k, j: (j // 16, k, j % 16))
i, j, k = sch.get_loops(b)
sch.decompose_reduction(b, k)
""", []),
}


def _script(src):
    if os.path.exists(src):
        with open(src) as f:
            return f.read()
    return src


def _cli(workload, script_path, extra, emit, tmp_path):
    cmd = [LOOM_CLI, "lower"]
    if callable(workload):
        tir = tmp_path / "input.tir"
        tir.write_text(workload().script())
        cmd.append(str(tir))
    else:
        cmd += ["-w", workload]
    cmd += ["-s", script_path, "--emit", emit] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_program_and_trace_as_cli(name, tmp_path):
    workload, src, extra = CASES[name]
    text = _script(src)
    script_path = tmp_path / "schedule.py"
    script_path.write_text(text)
    func = workload() if callable(workload) else loom.topi.workload(workload)
    sch = loom.tir.Schedule(func)
    exec(compile(text, str(script_path), "exec"), {"sch": sch})
    assert sch.func.script() == _cli(workload, str(script_path), extra, "tir", tmp_path)
    assert str(sch.trace).rstrip("\n") == _cli(workload, str(script_path), extra, "trace", tmp_path).rstrip("\n")


def test_every_primitive_is_covered():
    used = set()
    for _, src, _ in CASES.values():
        used |= set(re.findall(r"sch\.([a-z_]+)\(", _script(src)))
    missing = set(loom.tir.Schedule.primitives()) - used
    assert not missing, f"primitives without a parity case: {sorted(missing)}"


def test_trace_replays():
    func = loom.topi.workload("matmul:M=64,N=64,K=64")
    sch = loom.tir.Schedule(func)
    exec(_script(os.path.join(EX, "matmul_tiled.py")), {"sch": sch})
    fresh = loom.tir.Schedule(func)
    sch.trace.apply_to_schedule(fresh)
    assert fresh.func.script() == sch.func.script()
    again = loom.tir.Schedule(func)
    loom.tir.Trace.from_json(sch.trace.as_json()).apply_to_schedule(again)
    assert loom.structural_equal(again.func, sch.func)
    # Block names work wherever a block is expected, as in TVM.
    by_name = loom.tir.Schedule(func)
    i, j, k = by_name.get_loops("C")
    assert by_name.get(i) == "i" and by_name.get(by_name.get_block("C")) == "C"
