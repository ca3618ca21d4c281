#!/usr/bin/python3
"""Builds models with dynamic axes (symbolic batch, sequence length, image size) for issue #18.

Each model goes to OUT/<name>/model.onnx with several test_data_set_K of different input shapes
(input_0.pb and PyTorch's output_0.pb), so `loom onnx-test OUT/<name>` runs every shape against one
compiled module. Fixed seeds; made on demand, never committed. Run with /usr/bin/python3 (Debian's
python3-torch, python3-torchvision, python3-onnx; scripts/install-bench-deps.sh installs them).

Usage: make_dynamic_models.py [--out DIR] [--only NAME[,NAME...]] [--force]
"""
import os
import sys

import numpy as np
import onnx
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_torch_models import (BertEncoderNet, REPO, calibrate_batchnorm, parse_selection, small_vit,  # noqa: E402
                               write_tensor)

OPSET = 17


class OcrNet(torch.nn.Module):
    """A text-recognizer-style front end with a dynamic width: two conv branches, one at half
    resolution and upsampled back (bilinear), concatenated along channels, a 3x3 conv, a pool over
    the height and a per-column linear head. Input (batch, 3, 32, W); output (batch, W/2, 40)."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32),
                                        torch.nn.ReLU())
        self.down = torch.nn.Sequential(torch.nn.Conv2d(32, 32, 3, stride=2, padding=1), torch.nn.ReLU())
        self.fuse = torch.nn.Sequential(torch.nn.Conv2d(64, 48, 3, padding=1), torch.nn.ReLU(),
                                        torch.nn.MaxPool2d(2))
        self.head = torch.nn.Linear(48, 40)

    def forward(self, x):
        a = self.stem(x)
        b = torch.nn.functional.interpolate(self.down(a), scale_factor=2.0, mode="bilinear",
                                            align_corners=False)
        h = self.fuse(torch.cat([a, b], 1))          # (batch, 48, 16, W/2)
        h = h.mean(dim=2).transpose(1, 2)            # (batch, W/2, 48)
        return self.head(h)


# name -> (constructor, input name, dtype, {axis: symbol}, [test shapes])
MODELS = {
    "cnn_dynamic": (lambda: torchvision.models.resnet18(weights=None), "data", "float32",
                    {0: "batch", 2: "H", 3: "W"}, [(1, 3, 224, 224), (3, 3, 160, 200), (2, 3, 96, 320)]),
    "bert_dynamic": (BertEncoderNet, "input_ids", "int64", {0: "batch", 1: "seq"},
                     [(1, 7), (3, 64), (2, 200)]),
    "ocr_dynamic": (OcrNet, "data", "float32", {0: "batch", 3: "W"},
                    [(1, 3, 32, 160), (1, 3, 32, 800), (3, 3, 32, 320)]),
    # A dynamic batch alone, as most exported models have it: ShuffleNet's channel shuffles and
    # padding channels, ViT's class token expanded over the batch (Where(Equal(shape, -1))).
    "shufflenet_dynamic": (lambda: torchvision.models.shufflenet_v2_x0_5(weights=None), "data", "float32",
                           {0: "batch"}, [(1, 3, 224, 224), (3, 3, 224, 224)]),
    "vit_dynamic": (small_vit, "data", "float32", {0: "batch"}, [(1, 3, 224, 224), (2, 3, 224, 224)]),
}


def make(name, out_dir, force):
    d = os.path.join(out_dir, name)
    ctor, in_name, dtype, axes, shapes = MODELS[name]
    path = os.path.join(d, "model.onnx")
    sets = [os.path.join(d, f"test_data_set_{k}") for k in range(len(shapes))]
    if not force and os.path.exists(path) and all(os.path.exists(os.path.join(s, "output_0.pb")) for s in sets):
        print(f"{name}: kept {d}")
        return
    torch.manual_seed(1234)
    model = ctor()
    gen = torch.Generator().manual_seed(42)
    if dtype == "int64":
        model.eval()
        inputs = [torch.randint(0, 8192, s, generator=gen, dtype=torch.int64) for s in shapes]
    else:
        calibrate_batchnorm(model, shapes[0], gen)
        inputs = [torch.randn(s, generator=gen) for s in shapes]
    os.makedirs(d, exist_ok=True)
    torch.onnx.export(model, (inputs[0],), path, opset_version=OPSET, input_names=[in_name],
                      output_names=["output"], dynamic_axes={in_name: axes, "output": {0: "batch"}},
                      do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    for s, x in zip(sets, inputs):
        with torch.no_grad():
            y = model(x)
        os.makedirs(s, exist_ok=True)
        write_tensor(os.path.join(s, "input_0.pb"), x.numpy(), in_name)
        write_tensor(os.path.join(s, "output_0.pb"), y.numpy().astype(np.float32), "output")
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, {in_name} axes {axes}, shapes {shapes}")


def main():
    args, names = parse_selection(__doc__, MODELS, os.path.join(REPO, "build", "models"))
    torch.set_num_threads(2)
    for n in names:
        make(n, args.out, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
