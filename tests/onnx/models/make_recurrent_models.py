#!/usr/bin/python3
"""Small real models with recurrent layers, exported from PyTorch with fixed-seed weights: a
2-layer bidirectional LSTM tagger (embedding, BiLSTM, linear), a GRU encoder (2 layers, output
and final state) and a CRNN-style OCR model (CNN, BiLSTM, linear CTC head with log-softmax).
Each goes to tests/onnx/models/<name>/ with a random input and PyTorch's output in the ONNX
backend-test layout, so `loom onnx-test tests/onnx/models/*/` checks them (ctest
onnx.recurrent_models). Needs Debian's python3-torch and python3-onnx; run with /usr/bin/python3.
"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


class Tagger(torch.nn.Module):
    def __init__(self, vocab=50, emb=24, hidden=32, tags=9):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, emb)
        self.lstm = torch.nn.LSTM(emb, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.out = torch.nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        return self.out(y)


class GRUEncoder(torch.nn.Module):
    def __init__(self, feat=16, hidden=40):
        super().__init__()
        self.gru = torch.nn.GRU(feat, hidden, num_layers=2)

    def forward(self, x):
        y, h = self.gru(x)
        return y, h


class CRNN(torch.nn.Module):
    def __init__(self, classes=37, hidden=32):
        super().__init__()
        self.cnn = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.MaxPool2d((2, 1)),
        )
        self.rnn = torch.nn.LSTM(32 * 8, hidden, bidirectional=True)
        self.head = torch.nn.Linear(2 * hidden, classes)

    def forward(self, img):                      # img [B, 1, 32, W]
        f = self.cnn(img)                        # [B, 32, 8, W/2]
        b, c, h, w = f.shape
        seq = f.permute(3, 0, 1, 2).reshape(w, b, c * h)  # [T, B, C*H]
        y, _ = self.rnn(seq)
        return torch.nn.functional.log_softmax(self.head(y), dim=2)  # [T, B, classes] for CTC


def save(name, model, inputs):
    model.eval()
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    with torch.no_grad():
        outs = model(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    torch.onnx.export(model, tuple(inputs), os.path.join(d, "model.onnx"), opset_version=14,
                      input_names=[f"in{k}" for k in range(len(inputs))],
                      output_names=[f"out{k}" for k in range(len(outs))])
    onnx.checker.check_model(onnx.load(os.path.join(d, "model.onnx")))
    for k, a in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a.numpy()).SerializeToString())
    for k, a in enumerate(outs):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a.numpy()).SerializeToString())


torch.manual_seed(0)
save("bilstm_tagger", Tagger(), [torch.randint(0, 50, (2, 12))])
save("gru_encoder", GRUEncoder(), [torch.randn(10, 3, 16)])
crnn = CRNN()
with torch.no_grad():
    crnn.cnn[4].running_mean.uniform_(-0.2, 0.2)
    crnn.cnn[4].running_var.uniform_(0.5, 1.5)
save("crnn_ctc", crnn, [torch.randn(2, 1, 32, 40)])
