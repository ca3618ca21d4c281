#!/usr/bin/python3
"""Builds real TorchScript models (traced torchvision nets, a transformer encoder, a scripted net).

Each model goes to OUT/<name>/ (OUT defaults to <repo>/build/torchscript-models): model.pt
(torch.jit.save), model.onnx (the same module exported, opset 17, for the .pt-vs-ONNX comparison;
not for the scripted one), data.npz (the input under forward()'s argument name and PyTorch's
outputs output_0, ...) and shapes.txt (the --input-shapes text). Weights are random with fixed
seeds; the files are large and never committed. Needs Debian's python3-torch, python3-torchvision
and python3-onnx (scripts/install-bench-deps.sh); run it with /usr/bin/python3.

Usage: make_torchscript_models.py [--out DIR] [--only NAME[,NAME...]] [--force]
"""
import argparse
import inspect
import os
import sys

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from make_torch_models import TransformerEncoderNet, calibrate_batchnorm  # noqa: E402


class SegmentationOut(torch.nn.Module):
    """torchvision's segmentation nets return a dict; tracing wants a tensor."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


class ScriptedNet(torch.nn.Module):
    """Scripted (not traced): a ModuleList loop, a constant if on an attribute, shape arithmetic."""

    def __init__(self, blocks: int = 4, residual: bool = True):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.blocks = torch.nn.ModuleList(
            [torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU())
             for _ in range(blocks)])
        self.residual = residual
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            if self.residual:
                x = x + b(x)
            else:
                x = b(x)
        n = x.size(0)
        return self.head(x.mean(dim=[2, 3]).view(n, -1))


MODELS = ["resnet18", "mobilenet_v3_large", "efficientnet_b0", "shufflenet_v2_x1_0", "deeplabv3_mobilenet",
          "fcn_resnet50", "transformer_encoder", "scripted_loop_if"]


def build(name):
    """(module, input shape, script?) with weights drawn from a seed fixed per model."""
    torch.manual_seed(1234)
    tv = torchvision.models
    if name == "resnet18":
        return tv.resnet18(weights=None), (1, 3, 224, 224), False
    if name == "mobilenet_v3_large":
        return tv.mobilenet_v3_large(weights=None), (1, 3, 224, 224), False
    if name == "efficientnet_b0":
        return tv.efficientnet_b0(weights=None), (1, 3, 224, 224), False
    if name == "shufflenet_v2_x1_0":
        return tv.shufflenet_v2_x1_0(weights=None), (1, 3, 224, 224), False
    if name == "deeplabv3_mobilenet":
        return SegmentationOut(tv.segmentation.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=21, aux_loss=False)), (1, 3, 160, 160), False
    if name == "fcn_resnet50":
        return SegmentationOut(tv.segmentation.fcn_resnet50(
            weights=None, weights_backbone=None, num_classes=21, aux_loss=False)), (1, 3, 128, 128), False
    if name == "transformer_encoder":
        return TransformerEncoderNet(), (1, 64, 256), False
    if name == "scripted_loop_if":
        return ScriptedNet(), (1, 3, 64, 64), True
    raise SystemExit(f"unknown model {name}")


def make(name, out_dir, force):
    d = os.path.join(out_dir, name)
    if not force and all(os.path.exists(os.path.join(d, f)) for f in ("model.pt", "data.npz", "shapes.txt")):
        print(f"{name}: kept {d}")
        return
    os.makedirs(d, exist_ok=True)
    model, shape, script = build(name)
    gen = torch.Generator().manual_seed(42)
    calibrate_batchnorm(model, shape, gen)
    x = torch.randn(shape, generator=gen)
    arg = list(inspect.signature(model.forward).parameters)[0]
    with torch.no_grad():
        y = model(x)
        ts = torch.jit.script(model) if script else torch.jit.trace(model, (x,))
    torch.jit.save(ts, os.path.join(d, "model.pt"))
    if not script:
        torch.onnx.export(model, (x,), os.path.join(d, "model.onnx"), opset_version=17, input_names=[arg],
                          output_names=["output_0"], do_constant_folding=True)
    np.savez(os.path.join(d, "data.npz"), **{arg: x.numpy(), "output_0": y.numpy()})
    with open(os.path.join(d, "shapes.txt"), "w") as f:
        f.write(f"{arg}:[{','.join(str(s) for s in shape)}]\n")
    print(f"{name}: input {arg}{list(shape)}, output {list(y.shape)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "build", "torchscript-models"), help="output directory")
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
