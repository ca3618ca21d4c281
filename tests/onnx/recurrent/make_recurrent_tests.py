#!/usr/bin/env python3
"""LSTM/GRU/RNN node variants the ONNX backend tests leave out (reverse, bidirectional,
sequence_lens, clip, non-default activations, layout 1, initial states, peepholes), with
ONNX Runtime's outputs as the reference, in the backend-test layout (model.onnx,
test_data_set_0/{input,output}_N.pb) under tests/onnx/recurrent/<name>/.

Needs onnx and onnxruntime (PyPI, in a venv). The outputs are checked in; rerun to regenerate:
  python3 -m venv v && v/bin/pip install onnx onnxruntime && v/bin/python tests/onnx/recurrent/make_recurrent_tests.py
"""
import os
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def make(name, op, T=5, B=3, I=4, H=6, direction="forward", layout=0, seq=None, init=False, peep=False, wscale=0.5,
         **attrs):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    D = 2 if direction == "bidirectional" else 1
    G = GATES[op]
    x_shape = [T, B, I] if layout == 0 else [B, T, I]
    feeds = {"X": rng.standard_normal(x_shape).astype(np.float32)}
    inits = [
        numpy_helper.from_array((rng.standard_normal([D, G * H, I]) * wscale).astype(np.float32), "W"),
        numpy_helper.from_array((rng.standard_normal([D, G * H, H]) * wscale).astype(np.float32), "R"),
        numpy_helper.from_array((rng.standard_normal([D, 2 * G * H]) * 0.2).astype(np.float32), "B"),
    ]
    inputs = ["X", "W", "R", "B"]
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)]
    if seq is not None:
        feeds["sequence_lens"] = np.array(seq, dtype=np.int32)
        graph_inputs.append(helper.make_tensor_value_info("sequence_lens", TensorProto.INT32, [B]))
        inputs.append("sequence_lens")
    else:
        inputs.append("")
    state_shape = [D, B, H] if layout == 0 else [B, D, H]
    if init:
        for s in ["initial_h"] + (["initial_c"] if op == "LSTM" else []):
            feeds[s] = rng.standard_normal(state_shape).astype(np.float32)
            graph_inputs.append(helper.make_tensor_value_info(s, TensorProto.FLOAT, state_shape))
            inputs.append(s)
    elif peep:
        inputs += ["", ""]
    if peep:
        inits.append(numpy_helper.from_array((rng.standard_normal([D, 3 * H]) * 0.3).astype(np.float32), "P"))
        inputs.append("P")
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, inputs, outputs, hidden_size=H, direction=direction, layout=layout, **attrs)
    y_shape = [T, D, B, H] if layout == 0 else [B, T, D, H]
    out_info = [helper.make_tensor_value_info(o, TensorProto.FLOAT, y_shape if o == "Y" else state_shape)
                for o in outputs]
    graph = helper.make_graph([node], name, graph_inputs, out_info, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    names = [i.name for i in graph_inputs]
    # ONNX Runtime runs layout 0 only: the reference of a layout-1 model is the layout-0 model
    # on transposed inputs, its outputs transposed back.
    ref = model
    ref_feeds = {n: feeds[n] for n in names}
    if layout == 1:
        ref = onnx.ModelProto()
        ref.CopyFrom(model)
        for a in ref.graph.node[0].attribute:
            if a.name == "layout":
                a.i = 0
        for vi in list(ref.graph.input) + list(ref.graph.output):
            vi.type.tensor_type.ClearField("shape")
        ref_feeds = {n: (np.swapaxes(v, 0, 1) if v.ndim == 3 else v) for n, v in ref_feeds.items()}
    sess = ort.InferenceSession(ref.SerializeToString(), providers=["CPUExecutionProvider"])
    results = sess.run(None, ref_feeds)
    if layout == 1:
        results = [np.transpose(results[0], (2, 0, 1, 3))] + [np.swapaxes(r, 0, 1) for r in results[1:]]
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, n in enumerate(names):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[n]).SerializeToString())
    for k, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r).SerializeToString())


make("lstm_reverse", "LSTM", direction="reverse")
make("lstm_bidirectional_seqlens", "LSTM", direction="bidirectional", seq=[5, 2, 4], init=True)
make("lstm_bidirectional_layout1_peephole", "LSTM", direction="bidirectional", layout=1, init=True, peep=True)
make("lstm_clip_input_forget", "LSTM", clip=0.7, input_forget=1)
make("lstm_activations", "LSTM", direction="bidirectional",
     activations=["HardSigmoid", "Softsign", "Elu", "Sigmoid", "Tanh", "Softplus"],
     activation_alpha=[0.3, 0.9], activation_beta=[0.4])
make("gru_bidirectional_seqlens", "GRU", direction="bidirectional", seq=[3, 5, 1], init=True)
make("gru_reverse_lbr", "GRU", direction="reverse", linear_before_reset=1)
make("gru_layout1_clip", "GRU", layout=1, clip=0.5, init=True)
make("rnn_bidirectional_relu", "RNN", direction="bidirectional", activations=["Relu", "LeakyRelu"], activation_alpha=[0.2])
make("rnn_reverse_seqlens_layout1", "RNN", direction="reverse", layout=1, seq=[2, 5, 3])
make("lstm_hidden32_vectorized", "LSTM", T=7, B=2, I=10, H=32, direction="bidirectional", seq=[7, 4])
# Hidden >= 128: nn.recurrence's kernel splits the units over a team of two tasks with a barrier
# per step (onnx.recurrent_team_one_thread runs these with one thread: the serial fallback).
make("lstm_team_h128_bidirectional_seqlens", "LSTM", T=6, B=2, I=8, H=128, direction="bidirectional", seq=[6, 3],
     init=True, peep=True, wscale=0.1)
make("gru_team_h128_reverse_lbr_seqlens", "GRU", T=5, B=2, I=8, H=128, direction="reverse", seq=[5, 2],
     linear_before_reset=1, wscale=0.1)
make("rnn_team_h144", "RNN", T=5, B=1, I=8, H=144, wscale=0.1)
# Hidden a multiple of 16: R^T is packed in panels of P columns (P the largest of 64, 32, 16, 8
# dividing H/2): GRU without linear_before_reset (serial, its h gate's matmul starts at panel 2H/P),
# P = 16 and 32 without a team (the team cases above have P = 64 and 8).
make("gru_packed_h64_bidirectional", "GRU", T=4, B=2, I=8, H=64, direction="bidirectional", seq=[4, 2], init=True,
     wscale=0.15)
make("lstm_packed_h96_reverse_seqlens", "LSTM", T=5, B=3, I=8, H=96, direction="reverse", seq=[5, 1, 3], wscale=0.1)
