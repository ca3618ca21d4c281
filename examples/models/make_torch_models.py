#!/usr/bin/python3
"""Builds real-model ONNX files (torchvision CNNs, a transformer encoder) with fixed-seed random weights.

Each model goes to OUT/<name>/model.onnx (OUT defaults to <repo>/build/models) with a reference
input and the PyTorch output in the ONNX backend-test layout (test_data_set_0/input_0.pb,
output_0.pb), so `loom onnx-test OUT/*` checks them. The files are large (5-45 MB) and are never
committed: this script makes them on demand. Needs Debian's python3-torch, python3-torchvision
and python3-onnx (scripts/install-bench-deps.sh installs them); run it with /usr/bin/python3.

Usage: make_torch_models.py [--out DIR] [--only NAME[,NAME...]] [--force]
Models whose directory already holds model.onnx and test data are kept unless --force is given.
"""
import argparse
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OPSET = 17  # the newest opset torch 1.13 exports; LayerNormalization needs 17


class TransformerEncoderNet(torch.nn.Module):
    """A 4-layer post-norm transformer encoder (d_model 256, 4 heads, FFN 512, GELU) plus a final LayerNorm."""

    def __init__(self, d_model=256, nhead=4, ffn=512, layers=4):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ffn, dropout=0.1,
                                                 activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, norm=torch.nn.LayerNorm(d_model),
                                                   enable_nested_tensor=False)
        # nn.TransformerEncoder deep-copies one layer, so every layer starts with the same weights:
        # draw each parameter afresh so the layers differ (and biases and norms are not trivial).
        for name, p in self.named_parameters():
            with torch.no_grad():
                if p.dim() > 1:
                    torch.nn.init.xavier_uniform_(p)
                elif "norm" in name and name.endswith("weight"):
                    p.uniform_(0.5, 1.5)
                else:
                    p.normal_(0.0, 0.05)

    def forward(self, src):
        return self.encoder(src)


def calibrate_batchnorm(model, shape, gen):
    """Gives BatchNorm layers realistic running statistics from a few random batches, then eval()."""
    has_bn = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())
    if has_bn:
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.reset_running_stats()
                m.momentum = None  # cumulative average over the calibration batches
        model.train()
        with torch.no_grad():
            for _ in range(4):
                model(torch.randn((4,) + tuple(shape[1:]), generator=gen))
    model.eval()


def build(name):
    """Returns (module, input name, input shape) with weights drawn from a seed fixed per model."""
    torch.manual_seed(1234)
    if name == "resnet18":
        return torchvision.models.resnet18(weights=None), "data", (1, 3, 224, 224)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), "data", (1, 3, 224, 224)
    if name == "squeezenet1_1":
        return torchvision.models.squeezenet1_1(weights=None), "data", (1, 3, 224, 224)
    if name == "transformer_encoder":
        return TransformerEncoderNet(), "src", (1, 64, 256)
    raise SystemExit(f"unknown model {name}")


MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder"]


def write_tensor(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def make(name, out_dir, force):
    d = os.path.join(out_dir, name)
    data = os.path.join(d, "test_data_set_0")
    if not force and all(os.path.exists(os.path.join(p)) for p in
                         (os.path.join(d, "model.onnx"), os.path.join(data, "input_0.pb"),
                          os.path.join(data, "output_0.pb"))):
        print(f"{name}: kept {d}")
        return
    model, in_name, shape = build(name)
    gen = torch.Generator().manual_seed(42)
    calibrate_batchnorm(model, shape, gen)
    x = torch.randn(shape, generator=gen)
    with torch.no_grad():
        y = model(x)
    os.makedirs(data, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, (x,), path, opset_version=OPSET, input_names=[in_name], output_names=["output"],
                      do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    write_tensor(os.path.join(data, "input_0.pb"), x.numpy().astype(np.float32), in_name)
    write_tensor(os.path.join(data, "output_0.pb"), y.numpy().astype(np.float32), "output")
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, input {in_name}{list(shape)}, "
          f"output {list(y.shape)}, {len(m.graph.node)} nodes ({', '.join(ops)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "build", "models"), help="output directory")
    ap.add_argument("--only", default="", help="comma-separated subset of " + ",".join(MODELS))
    ap.add_argument("--force", action="store_true", help="rebuild models that already exist")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or MODELS
    for n in names:
        if n not in MODELS:
            ap.error(f"unknown model {n}; known: {', '.join(MODELS)}")
    torch.set_num_threads(2)
    for n in names:
        make(n, args.out, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
