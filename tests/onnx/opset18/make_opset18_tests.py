#!/usr/bin/env python3
"""What opsets 18-21 changed or added (axes as inputs of reductions and Pad, Pad wrap, Split
num_outputs, Resize antialias, DFT's axis input, AveragePool dilations, Mish, Gelu,
GroupNormalization, CenterCropPad): one small model each (onnx.helper, fixed seeds) with ONNX
Runtime's outputs as the reference, in the backend-test layout under tests/onnx/opset18/<name>/.
The node tests of libonnx-testdata stop at opset 17, so these are the importer's only check of
the newer opsets.

Needs onnx and onnxruntime (PyPI, in a venv). The outputs are checked in; rerun to regenerate:
  v/bin/python tests/onnx/opset18/make_opset18_tests.py
"""
import os
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def make(name, opset, nodes, inputs, n_out=1, consts=None):
    """inputs: {name: array} fed as graph inputs; consts: {name: array} as initializers."""
    consts = consts or {}
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype")
                                       else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], list(v.shape))
         for k, v in inputs.items()],
        [helper.make_tensor_value_info(f"Y{i}" if n_out > 1 else "Y", TensorProto.FLOAT, None) for i in range(n_out)],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9 if opset <= 20 else 10
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results = sess.run(None, inputs)
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, v in enumerate(inputs.values()):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())
    for k, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r).SerializeToString())


def x(name, shape):
    return np.random.default_rng(zlib.crc32(name.encode())).standard_normal(shape).astype(np.float32)


def i64(*v):
    return np.array(v, dtype=np.int64)


N = helper.make_node
make("reduce_max_axes_input_18", 18, [N("ReduceMax", ["X", "axes"], ["Y"], keepdims=0)],
     {"X": x("rmax", [2, 3, 4])}, consts={"axes": i64(1)})
make("reduce_mean_noop_empty_axes_18", 18, [N("ReduceMean", ["X"], ["Y"], noop_with_empty_axes=1)],
     {"X": x("rmean", [2, 3])})
make("reduce_l2_axes_input_18", 18, [N("ReduceL2", ["X", "axes"], ["Y"])], {"X": x("rl2", [3, 4, 2])},
     consts={"axes": i64(0, 2)})
make("reduce_logsumexp_axes_input_18", 18, [N("ReduceLogSumExp", ["X", "axes"], ["Y"], keepdims=0)],
     {"X": x("rlse", [3, 5])}, consts={"axes": i64(-1)})
make("reduce_prod_all_18", 18, [N("ReduceProd", ["X"], ["Y"], keepdims=0)], {"X": x("rprod", [2, 3])})
make("pad_axes_18", 18, [N("Pad", ["X", "pads", "value", "axes"], ["Y"])], {"X": x("pad", [2, 3, 4, 2])},
     consts={"pads": i64(1, 0, 2, 3), "value": np.array(1.5, np.float32), "axes": i64(1, -1)})
make("pad_wrap_19", 19, [N("Pad", ["X", "pads"], ["Y"], mode="wrap")], {"X": x("wrap", [3, 4])},
     consts={"pads": i64(1, 2, 2, 3)})
make("split_num_outputs_18", 18, [N("Split", ["X"], ["Y0", "Y1", "Y2"], axis=1, num_outputs=3)],
     {"X": x("split", [2, 7])}, n_out=3)
for mode in ["linear", "cubic"]:
    for ctm in ["half_pixel", "pytorch_half_pixel", "asymmetric"]:
        make(f"resize_{mode}_antialias_{ctm}_18", 18,
             [N("Resize", ["X", "", "scales"], ["Y"], mode=mode, antialias=1, coordinate_transformation_mode=ctm)],
             {"X": x(f"aa{mode}{ctm}", [1, 2, 9, 10])}, consts={"scales": np.array([1, 1, 0.5, 0.6], np.float32)})
make("resize_cubic_antialias_sizes_exclude_18", 18,
     [N("Resize", ["X", "", "", "sizes"], ["Y"], mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5)],
     {"X": x("aasizes", [2, 1, 12, 7])}, consts={"sizes": i64(2, 1, 5, 9)})
make("dft_axis_input_20", 20, [N("DFT", ["X", "", "axis"], ["Y"])], {"X": x("dft", [2, 6, 5, 1])},
     consts={"axis": np.array(1, np.int64)})
make("averagepool_dilations_19", 19, [N("AveragePool", ["X"], ["Y"], kernel_shape=[2, 2], dilations=[2, 1], strides=[1, 2])],
     {"X": x("avgdil", [1, 2, 7, 8])})
make("mish_18", 18, [N("Mish", ["X"], ["Y"])], {"X": x("mish", [3, 7]) * 4})
make("gelu_20", 20, [N("Gelu", ["X"], ["Y"])], {"X": x("gelu", [4, 5]) * 2})
make("gelu_tanh_20", 20, [N("Gelu", ["X"], ["Y"], approximate="tanh")], {"X": x("gelutanh", [4, 5]) * 2})
make("group_normalization_18", 18, [N("GroupNormalization", ["X", "scale", "bias"], ["Y"], num_groups=2, epsilon=1e-3)],
     {"X": x("gn18", [2, 6, 3, 2])}, consts={"scale": x("gn18s", [2]), "bias": x("gn18b", [2])})
make("group_normalization_21", 21, [N("GroupNormalization", ["X", "scale", "bias"], ["Y"], num_groups=3)],
     {"X": x("gn21", [2, 6, 4])}, consts={"scale": x("gn21s", [6]), "bias": x("gn21b", [6])})
make("center_crop_pad_18", 18, [N("CenterCropPad", ["X", "shape"], ["Y"], axes=[0, 2])], {"X": x("ccp", [5, 3, 4])},
     consts={"shape": i64(2, 7)})
# Not new in 18, done by the same interpolation matrices: tf_crop_and_resize (cubic; linear is
# the node test), part of the crop box outside the image (extrapolation_value).
make("resize_cubic_tf_crop_and_resize_13", 13,
     [N("Resize", ["X", "roi", "", "sizes"], ["Y"], mode="cubic", coordinate_transformation_mode="tf_crop_and_resize",
        extrapolation_value=-3.0)],
     {"X": x("tfcrop", [1, 2, 6, 7])},
     consts={"roi": np.array([0, 0, 0.1, -0.2, 1, 1, 0.8, 0.9], np.float32), "sizes": i64(1, 2, 4, 5)})
