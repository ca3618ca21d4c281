# TVM's "Getting started with TVMC Python" with only the import line changed: load an ONNX model,
# tune it briefly, compile it to a package with the tuning records, run it on an input.
# Run:  PYTHONPATH=build/python python3 examples/python/tvmc_model.py
import os
import tempfile

import numpy as np

from loom.driver import tvmc  # TVM: from tvm.driver import tvmc

here = os.path.dirname(os.path.abspath(__file__))
model_path = os.path.join(here, "..", "models", "small_cnn", "model.onnx")
work = tempfile.mkdtemp(prefix="tvmc-example-")

# Step 1: load.
model = tvmc.load(model_path, shape_dict={"data": [1, 3, 16, 16]})
model.summary()

# Step 2 (optional): tune, printing progress.
def progress(event):
    if event["kind"] == "progress":
        print(f"  task {event['task_index'] + 1}/{event['task_count']}: {event['trials_done']}/"
              f"{event['trials_total']} trials, best {event['best_ms']:.4f} ms")

records = tvmc.tune(model, target="llvm", trials=4, tuning_records=os.path.join(work, "records.json"),
                    callback=progress)

# Step 3: compile to a package (runnable by the runtime alone).
package = tvmc.compile(model, target="llvm", tuning_records=records,
                       package_path=os.path.join(work, "small_cnn.tar"))

# Step 4: run.
data = np.random.default_rng(0).uniform(-1, 1, (1, 3, 16, 16)).astype("float32")
result = tvmc.run(package, device="cpu", inputs={"data": data}, repeat=5)
print(result)
scores = next(iter(result.outputs.values()))
print("top-3 classes:", np.argsort(scores.ravel())[::-1][:3])

# The same package without tuning records computes the same scores.
plain = tvmc.run(tvmc.compile(model, target="llvm", package_path=os.path.join(work, "plain.so")),
                 inputs={"data": data})
np.testing.assert_allclose(next(iter(plain.outputs.values())), scores, rtol=1e-4, atol=1e-5)
