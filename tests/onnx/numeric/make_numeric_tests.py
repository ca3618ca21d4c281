#!/usr/bin/python3
"""Det, TfIdfVectorizer and MelWeightMatrix beyond the node tests, ONNX Runtime as the reference,
in the backend-test layout under tests/onnx/numeric/<name>/ (ctest onnx.numeric_ops):
Det of batches that need row swaps, singular and near-singular matrices and 1x1..6x6 sizes;
TfIdfVectorizer in TF, IDF and TFIDF modes with weights, 1-D and 2-D inputs, unigrams with
skips, int32 and int64; MelWeightMatrix with other sizes, edges and output type.

Needs onnx and onnxruntime (PyPI, in a venv over Debian's python3-onnx):
  python3 -m venv --system-site-packages v && v/bin/pip install onnxruntime
  v/bin/python tests/onnx/numeric/make_numeric_tests.py
"""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, node, inputs, outputs, sets, opset):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    g = helper.make_graph([node], name, inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"])
    for k, feeds in enumerate(sets):
        sd = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(sd)
        for i, (n, a) in enumerate(feeds.items()):
            onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(sd, f"input_{i}.pb"))
        for i, a in enumerate(sess.run(None, feeds)):
            onnx.save_tensor(numpy_helper.from_array(a, f"out{i}"), os.path.join(sd, f"output_{i}.pb"))


def det_tests():
    r = np.random.default_rng(24)
    for n, batch in [(1, [3]), (3, [2, 2]), (4, [5]), (6, [2])]:
        sets = []
        a = r.standard_normal(batch + [n, n]).astype(np.float32)
        sets.append({"x": a})
        b = r.standard_normal(batch + [n, n]).astype(np.float32)
        if n > 1:
            b[..., 0, 0] = 0              # a zero first pivot: a swap is needed
            b.reshape(-1, n, n)[0, :, 1] = b.reshape(-1, n, n)[0, :, 0] * 2  # a singular matrix
            b.reshape(-1, n, n)[-1, :, :] = (np.triu(r.standard_normal([n, n])) + 2 * np.eye(n))[::-1]  # rows reversed
        sets.append({"x": b})
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, batch + [n, n])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, batch)
        save(f"det_{n}x{n}", helper.make_node("Det", ["x"], ["y"]), [x], [y], sets, 11)


def tfidf_tests():
    r = np.random.default_rng(7)
    pool = np.array([2, 3, 5, 4,  5, 6,  7, 8,  6, 7,  3, 3,  3, 3, 7,  2, 5, 6], np.int64)
    counts = [0, 4, 12]            # 4 unigrams, 4 bigrams, 2 trigrams
    indexes = [9, 0, 3, 1, 2, 4, 5, 6, 7, 8]
    weights = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 4.0, 2.5, 0.125]
    cases = [("tf_all_skip2_2d", "TF", 1, 3, 2, [3, 12], TensorProto.INT64),
             ("idf_uni_bi_skip1_2d", "IDF", 1, 2, 1, [2, 9], TensorProto.INT32),
             ("tfidf_bi_tri_skip3_1d", "TFIDF", 2, 3, 3, [16], TensorProto.INT64),
             ("tfidf_uni_noweights_1d", "TFIDF", 1, 1, 4, [10], TensorProto.INT32)]
    for name, mode, lo, hi, skip, shape, t in cases:
        attrs = dict(mode=mode, min_gram_length=lo, max_gram_length=hi, max_skip_count=skip,
                     ngram_counts=counts, ngram_indexes=indexes, pool_int64s=pool.tolist())
        if "noweights" not in name:
            attrs["weights"] = weights
        node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
        dt = np.int64 if t == TensorProto.INT64 else np.int32
        sets = [{"x": r.integers(2, 9, shape).astype(dt)}, {"x": np.full(shape, 3, dt)}]
        out = [10] if len(shape) == 1 else [shape[0], 10]
        save(f"tfidf_{name}", node, [helper.make_tensor_value_info("x", t, shape)],
             [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)], sets, 9)


def mel_tests():
    names = ["num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"]
    for name, vals, out_t in [("mel_20_512_16k", (20, 512, 16000, 125.0, 7600.0), TensorProto.FLOAT),
                              ("mel_10_64_8k_double", (10, 64, 8000, 300.0, 3000.0), TensorProto.DOUBLE)]:
        node = helper.make_node("MelWeightMatrix", names, ["y"], output_datatype=out_t)
        feeds = {names[0]: np.array(vals[0], np.int64), names[1]: np.array(vals[1], np.int64),
                 names[2]: np.array(vals[2], np.int64), names[3]: np.array(vals[3], np.float32),
                 names[4]: np.array(vals[4], np.float32)}
        inputs = [helper.make_tensor_value_info(n, TensorProto.INT64 if i < 3 else TensorProto.FLOAT, [])
                  for i, n in enumerate(names)]
        save(name, node, inputs, [helper.make_tensor_value_info("y", out_t, [vals[1] // 2 + 1, vals[0]])],
             [feeds], 17)


if __name__ == "__main__":
    det_tests()
    tfidf_tests()
    mel_tests()
