#!/usr/bin/python3
"""Builds the model zoo (ONNX files of torchvision CNNs, detectors, transformers) with fixed-seed random weights.

Each model goes to OUT/<name>/model.onnx (OUT defaults to <repo>/build/models) with a reference
input and the PyTorch output in the ONNX backend-test layout (test_data_set_0/input_0.pb,
output_0.pb), so `loom onnx-test OUT/*` checks them. The files are large (5-100 MB) and are never
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


def draw_transformer_params(module):
    """Draws every parameter afresh: xavier for matrices, norm weights around 1, small biases
    (nn.TransformerEncoder deep-copies one layer, so its layers would otherwise start equal)."""
    for name, p in module.named_parameters():
        with torch.no_grad():
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)
            elif "norm" in name and name.endswith("weight"):
                p.uniform_(0.5, 1.5)
            else:
                p.normal_(0.0, 0.05)


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
        draw_transformer_params(self)

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


class BertEncoderNet(torch.nn.Module):
    """A BERT-style encoder: token + position embeddings, LayerNorm, 4 pre-norm layers (d_model 256,
    4 heads, FFN 1024, GELU), a final LayerNorm and a tanh pooler on the first token. Input: int64 ids."""

    def __init__(self, vocab=8192, max_len=512, d_model=256, nhead=4, ffn=1024, layers=4):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, d_model)
        self.pos = torch.nn.Embedding(max_len, d_model)
        self.norm_in = torch.nn.LayerNorm(d_model)
        layer = torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ffn, dropout=0.1,
                                                 activation="gelu", batch_first=True, norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, norm=torch.nn.LayerNorm(d_model),
                                                   enable_nested_tensor=False)
        self.pool = torch.nn.Linear(d_model, d_model)
        draw_transformer_params(self)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        h = self.norm_in(self.tok(input_ids) + self.pos(positions))
        h = self.encoder(h)
        return torch.tanh(self.pool(h[:, 0]))


class FpnDetectorNet(torch.nn.Module):
    """A text-detector-style net (DBNet-like): ResNet-18 trunk, an FPN (1x1 laterals, nearest 2x
    upsampling + add, 3x3 smoothing), the four levels upsampled to 1/4 and concatenated, and a head of
    a 3x3 conv and two stride-2 ConvTranspose layers back to full resolution (a probability map)."""

    def __init__(self, width=64):
        super().__init__()
        r = torchvision.models.resnet18(weights=None)
        self.stem = torch.nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool)
        self.stages = torch.nn.ModuleList([r.layer1, r.layer2, r.layer3, r.layer4])
        self.lateral = torch.nn.ModuleList([torch.nn.Conv2d(c, width, 1) for c in (64, 128, 256, 512)])
        self.smooth = torch.nn.ModuleList([torch.nn.Conv2d(width, width // 4, 3, padding=1) for _ in range(4)])
        self.head = torch.nn.Sequential(
            torch.nn.Conv2d(width, width // 4, 3, padding=1, bias=False), torch.nn.BatchNorm2d(width // 4),
            torch.nn.ReLU(),
            torch.nn.ConvTranspose2d(width // 4, width // 4, 2, stride=2), torch.nn.BatchNorm2d(width // 4),
            torch.nn.ReLU(),
            torch.nn.ConvTranspose2d(width // 4, 1, 2, stride=2), torch.nn.Sigmoid())

    def forward(self, x):
        feats = []
        h = self.stem(x)
        for s in self.stages:
            h = s(h)
            feats.append(h)
        p = [l(f) for l, f in zip(self.lateral, feats)]
        for i in (2, 1, 0):
            p[i] = p[i] + torch.nn.functional.interpolate(p[i + 1], scale_factor=2.0, mode="nearest")
        outs = []
        for i, (sm, f) in enumerate(zip(self.smooth, p)):
            o = sm(f)
            if i:
                o = torch.nn.functional.interpolate(o, scale_factor=float(2 ** i), mode="nearest")
            outs.append(o)
        return self.head(torch.cat(outs, 1))


class SegmentationNet(torch.nn.Module):
    """torchvision's DeepLabV3 on MobileNet-v3-large (dilated convs, ASPP, bilinear resize): 'out' only."""

    def __init__(self):
        super().__init__()
        self.net = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=21, aux_loss=False)

    def forward(self, x):
        return self.net(x)["out"]


def small_vit():
    """A ViT-S/16-shaped vision transformer with 6 layers (hidden 384, 6 heads, MLP 1536)."""
    m = torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=6, num_heads=6,
                                             hidden_dim=384, mlp_dim=1536, num_classes=1000)
    # torchvision zero-initializes the classifier head: the output would be all zeros and check nothing.
    with torch.no_grad():
        torch.nn.init.xavier_uniform_(m.heads.head.weight)
        m.heads.head.bias.normal_(0.0, 0.05)
    return m


IMAGE = (1, 3, 224, 224)
# name -> (constructor, input name, input shape, input dtype); every family of the zoo in issue #17.
ZOO = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), "data", IMAGE, "float32"),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), "data", IMAGE, "float32"),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), "data", IMAGE, "float32"),
    "mobilenet_v3_large": (lambda: torchvision.models.mobilenet_v3_large(weights=None), "data", IMAGE, "float32"),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), "data", IMAGE, "float32"),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(weights=None), "data", IMAGE, "float32"),
    "resnext50_32x4d": (lambda: torchvision.models.resnext50_32x4d(weights=None), "data", IMAGE, "float32"),
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), "data", IMAGE, "float32"),
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), "data", IMAGE, "float32"),
    "googlenet": (lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True),
                  "data", IMAGE, "float32"),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), "data", IMAGE, "float32"),
    "deeplabv3_mobilenet": (SegmentationNet, "data", (1, 3, 256, 256), "float32"),
    "fpn_detector": (FpnDetectorNet, "data", (1, 3, 320, 320), "float32"),
    "vit_small": (small_vit, "data", IMAGE, "float32"),
    "transformer_encoder": (TransformerEncoderNet, "src", (1, 64, 256), "float32"),
    "bert_encoder": (BertEncoderNet, "input_ids", (1, 128), "int64"),
}


def build(name):
    """Returns (module, input name, input shape, dtype) with weights drawn from a seed fixed per model."""
    if name not in ZOO:
        raise SystemExit(f"unknown model {name}")
    torch.manual_seed(1234)
    ctor, in_name, shape, dtype = ZOO[name]
    return ctor(), in_name, shape, dtype


MODELS = list(ZOO)


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
    model, in_name, shape, dtype = build(name)
    gen = torch.Generator().manual_seed(42)
    if dtype == "int64":
        model.eval()
        x = torch.randint(0, 8192, shape, generator=gen, dtype=torch.int64)
    else:
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
    write_tensor(os.path.join(data, "input_0.pb"), x.numpy(), in_name)
    write_tensor(os.path.join(data, "output_0.pb"), y.numpy().astype(np.float32), "output")
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, input {in_name}{list(shape)}, "
          f"output {list(y.shape)}, {len(m.graph.node)} nodes ({', '.join(ops)})")


def parse_selection(doc, known, default_out):
    """The model scripts' command line: --out DIR, --only NAME[,NAME...] (names from `known`),
    --force. Returns (args, the names to make, all of `known` without --only)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", default=default_out, help="output directory")
    ap.add_argument("--only", default="", help="comma-separated subset of " + ",".join(known))
    ap.add_argument("--force", action="store_true", help="rebuild models that already exist")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(known)
    for n in names:
        if n not in known:
            ap.error(f"unknown model {n}; known: {', '.join(known)}")
    return args, names


def main():
    args, names = parse_selection(__doc__, MODELS, os.path.join(REPO, "build", "models"))
    torch.set_num_threads(2)
    for n in names:
        make(n, args.out, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
