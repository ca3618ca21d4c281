# Tuning from Python: one PrimFunc with a progress callback (its best schedule replayed through
# loom.tir.Schedule and checked against numpy), and tvmc.tune followed by compiling with the records.
import os

import numpy as np

import loom
from loom import te
from loom.driver import tvmc
from test_tvmc import MODEL, reference


def test_tune_func_with_callback(tmp_path):
    A = te.placeholder((64, 64), name="A")
    B = te.placeholder((64, 64), name="B")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    events = []
    records = tmp_path / "r.json"
    r = loom.tune.tune_func(func, records, trials=4, batch_size=2, repeat=1, callback=events.append)
    kinds = {e["kind"] for e in events}
    assert "trial" in kinds and "progress" in kinds
    assert r["trials"] == 4 and r["best_ms"] > 0
    # The best schedule replays through Python and computes the same thing.
    sch = loom.tir.Schedule(func)
    exec(r["best_trace"], {"sch": sch})
    a = np.random.rand(64, 64).astype("float32")
    b = np.random.rand(64, 64).astype("float32")
    c = np.zeros((64, 64), "float32")
    loom.build(sch.mod)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    assert len(records.read_text().splitlines()) >= 4


def test_tvmc_tune_then_compile(tmp_path):
    x, y = reference()
    model = tvmc.load(MODEL, shape_dict={"data": list(x.shape)})
    seen = []
    records = tvmc.tune(model, target="llvm", trials=2, tuning_records=tmp_path / "records.json",
                        callback=seen.append, repeat=1, measure_baseline=False)
    assert any(e["kind"] == "trial" for e in seen) and os.path.getsize(records) > 0
    package = tvmc.compile(model, target="llvm", tuning_records=records, package_path=tmp_path / "tuned.tar")
    out = tvmc.run(package, inputs={"data": x}).outputs
    np.testing.assert_allclose(next(iter(out.values())), y, rtol=1e-4, atol=1e-4)
