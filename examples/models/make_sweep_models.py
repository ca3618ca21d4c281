#!/usr/bin/python3
"""Builds the sweep set: model families neither the bench zoo nor the generalisation set has.

make_torch_models.py (the bench zoo) and make_extra_models.py (the generalisation set) are what the
default schedules and the importer were checked on; this third set tries what neither holds, as a
user would bring it: video nets (3-D convs, BatchNorm3d, AdaptiveAvgPool3d: R3D-18, R(2+1)D-18,
MC3-18, S3D), MaxViT (relative-position attention, window partition reshapes, MBConv with SE), a
GPT-2-style decoder (causal mask by masked_fill, tanh GELU, tied output projection), a transformer
decoder with cross-attention on an encoder's memory, ESPCN super-resolution (PixelShuffle), a
fast-style-transfer net (ReflectionPad, InstanceNorm, nearest upsample), a diffusion-UNet block
(GroupNorm, SiLU, a sinusoidal timestep embedding broadcast-added, attention at 8x8; two inputs),
and known nets at batch > 1 or odd resolutions (ResNet-18 at batch 4, MobileNet-v2 at 197x263,
EfficientNet-B1 at 240) and torchvision classifiers nobody had tried (SqueezeNet 1.0, AlexNet,
ShuffleNet-v2 x0.5, MnasNet 0.5, RegNet-Y-800MF, ViT-B/32, Wide-ResNet-50-2).

Each model goes to OUT/<name>/ in the layout of make_torch_models.py (model.onnx,
test_data_set_0/input_K.pb and output_0.pb with the PyTorch output), so `loom onnx-test OUT/*`
checks them and `bench/bench_models.py` times them. Fixed seeds; the files are large and never
committed. Needs what make_torch_models.py needs; run it with /usr/bin/python3.

Usage: make_sweep_models.py [--out DIR] [--only NAME[,NAME...]] [--force]
"""
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_torch_models as zoo  # noqa: E402


class Gpt2(nn.Module):
    """A GPT-2-style decoder: token + learned position embeddings, 4 pre-norm blocks (d 256, 4 heads,
    MLP 1024, tanh GELU), causal self-attention masked by a lower-triangular buffer and masked_fill,
    a final LayerNorm and an output projection tied to the token embedding. Input: int64 ids."""

    def __init__(self, vocab=8192, ctx=128, d=256, heads=4, layers=4):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict({
                "ln1": nn.LayerNorm(d), "qkv": nn.Linear(d, 3 * d), "proj": nn.Linear(d, d),
                "ln2": nn.LayerNorm(d), "fc": nn.Linear(d, 4 * d), "out": nn.Linear(4 * d, d)}))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("causal", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))
        zoo.draw_transformer_params(self)
        self.head.weight = self.tok.weight  # tied

    def attention(self, b, x):
        n, t, d = x.shape
        q, k, v = b["qkv"](x).split(d, dim=2)
        q, k, v = (z.view(n, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        att = att.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return b["proj"](y.transpose(1, 2).contiguous().view(n, t, d))

    def forward(self, ids):
        t = ids.shape[1]
        h = self.tok(ids) + self.pos(torch.arange(t).unsqueeze(0))
        for b in self.blocks:
            h = h + self.attention(b, b["ln1"](h))
            h = h + b["out"](F.gelu(b["fc"](b["ln2"](h)), approximate="tanh"))
        return self.head(self.ln_f(h))


class CrossDecoder(nn.Module):
    """An encoder-decoder transformer (T5/DETR-like): 2 encoder layers make the memory from the
    input sequence, 2 nn.TransformerDecoder layers attend to it from 16 learned queries plus a
    projection of the first 16 input steps, with a causal target mask (attn_mask) and ReLU FFN."""

    def __init__(self, d=256, heads=8, queries=16):
        super().__init__()
        self.queries = queries
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, heads, 512, 0.0, batch_first=True), 2,
                                             enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(d, heads, 512, 0.0, batch_first=True), 2,
                                             norm=nn.LayerNorm(d))
        self.query = nn.Parameter(torch.zeros(1, queries, d))
        self.tgt_proj = nn.Linear(d, d)
        self.out = nn.Linear(d, 91)
        zoo.draw_transformer_params(self)
        self.register_buffer("tgt_mask", torch.triu(torch.full((queries, queries), float("-inf")), diagonal=1))

    def forward(self, src):
        memory = self.encoder(src)
        tgt = self.query + self.tgt_proj(src[:, :self.queries])
        return self.out(self.decoder(tgt, memory, tgt_mask=self.tgt_mask))


class Espcn(nn.Module):
    """ESPCN super-resolution x3 on the Y channel: 5x5/3x3/3x3 convs with tanh, PixelShuffle(3)."""

    def __init__(self, r=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(), nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(32, r * r, 3, padding=1), nn.PixelShuffle(r))

    def forward(self, x):
        return self.body(x)


class StyleTransfer(nn.Module):
    """Johnson et al.'s fast-style-transfer net: ReflectionPad + conv + InstanceNorm(affine) + ReLU,
    two stride-2 downsamples, 5 residual blocks, two nearest-2x upsample + conv, a 9x9 output conv."""

    def __init__(self):
        super().__init__()

        def conv(i, o, k, stride=1, upsample=False, norm=True, relu=True):
            layers = [nn.Upsample(scale_factor=2, mode="nearest")] if upsample else []
            layers += [nn.ReflectionPad2d(k // 2), nn.Conv2d(i, o, k, stride)]
            if norm:
                layers.append(nn.InstanceNorm2d(o, affine=True))
            if relu:
                layers.append(nn.ReLU())
            return nn.Sequential(*layers)

        self.down = nn.Sequential(conv(3, 32, 9), conv(32, 64, 3, 2), conv(64, 128, 3, 2))
        self.res = nn.ModuleList([nn.Sequential(conv(128, 128, 3), conv(128, 128, 3, relu=False)) for _ in range(5)])
        self.up = nn.Sequential(conv(128, 64, 3, upsample=True), conv(64, 32, 3, upsample=True),
                                conv(32, 3, 9, norm=False, relu=False))
        for m in self.modules():  # InstanceNorm's affine parameters start at 1 and 0: draw them
            if isinstance(m, nn.InstanceNorm2d):
                with torch.no_grad():
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.normal_(0.0, 0.1)

    def forward(self, x):
        h = self.down(x)
        for r in self.res:
            h = h + r(h)
        return self.up(h)


class DiffusionBlock(nn.Module):
    """A diffusion-UNet slice (Stable-Diffusion-like, small): sinusoidal embedding of the float
    timestep input -> MLP (SiLU) broadcast-added into ResNet blocks (GroupNorm 32, SiLU), a stride-2
    down, self-attention at 8x8 over GroupNorm'd features, nearest up, concat skip, output conv.
    Inputs: the latent (1,4,32,32) and the timestep (1,)."""

    def __init__(self, c=64, temb=128):
        super().__init__()
        self.temb_dim = temb
        self.time_mlp = nn.Sequential(nn.Linear(temb, 4 * temb), nn.SiLU(), nn.Linear(4 * temb, 4 * temb))
        self.inp = nn.Conv2d(4, c, 3, padding=1)
        self.res1 = self.resblock(c, c, 4 * temb)
        self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        self.res2 = self.resblock(2 * c, 2 * c, 4 * temb)
        self.down2 = nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1)
        self.attn_norm = nn.GroupNorm(32, 2 * c)
        self.attn = nn.MultiheadAttention(2 * c, 4, batch_first=True)
        self.up = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(2 * c, 2 * c, 3, padding=1))
        self.res3 = self.resblock(4 * c, 2 * c, 4 * temb)
        self.up2 = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(2 * c, c, 3, padding=1))
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 4, 3, padding=1))
        for m in self.modules():
            if isinstance(m, nn.GroupNorm):
                with torch.no_grad():
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.normal_(0.0, 0.1)

    @staticmethod
    def resblock(i, o, t):
        return nn.ModuleDict({"n1": nn.GroupNorm(32, i), "c1": nn.Conv2d(i, o, 3, padding=1), "t": nn.Linear(t, o),
                              "n2": nn.GroupNorm(32, o), "c2": nn.Conv2d(o, o, 3, padding=1),
                              "skip": nn.Conv2d(i, o, 1) if i != o else nn.Identity()})

    @staticmethod
    def run_res(b, x, emb):
        h = b["c1"](F.silu(b["n1"](x)))
        h = h + b["t"](F.silu(emb))[:, :, None, None]
        h = b["c2"](F.silu(b["n2"](h)))
        return b["skip"](x) + h

    def forward(self, x, t):
        half = self.temb_dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        args = t[:, None] * freqs[None]
        emb = self.time_mlp(torch.cat([torch.sin(args), torch.cos(args)], dim=1))
        h1 = self.run_res(self.res1, self.inp(x), emb)
        h2 = self.run_res(self.res2, self.down(h1), emb)
        h3 = self.down2(h2)
        n, c, hh, ww = h3.shape
        a = self.attn_norm(h3).flatten(2).transpose(1, 2)
        a, _ = self.attn(a, a, a, need_weights=False)
        h3 = h3 + a.transpose(1, 2).reshape(n, c, hh, ww)
        u = self.run_res(self.res3, torch.cat([self.up(h3), h2], 1), emb)
        return self.out(self.up2(u) + h1)


def with_head(model, head):
    """torchvision zero-initialises some classifiers (ViT): draw the head so the output checks something."""
    with torch.no_grad():
        nn.init.xavier_uniform_(head.weight)
        head.bias.normal_(0.0, 0.05)
    return model


def vit_b_32():
    m = torchvision.models.vit_b_32(weights=None)
    return with_head(m, m.heads.head)


IM = (1, 3, 224, 224)
CLIP = (1, 3, 8, 112, 112)
# name -> (constructor, [(input name, shape, dtype), ...])
SWEEP = {
    "r3d_18": (lambda: torchvision.models.video.r3d_18(weights=None), [("data", CLIP, "float32")]),
    "r2plus1d_18": (lambda: torchvision.models.video.r2plus1d_18(weights=None), [("data", CLIP, "float32")]),
    "mc3_18": (lambda: torchvision.models.video.mc3_18(weights=None), [("data", CLIP, "float32")]),
    "s3d": (lambda: torchvision.models.video.s3d(weights=None), [("data", (1, 3, 16, 224, 224), "float32")]),
    "maxvit_t": (lambda: torchvision.models.maxvit_t(weights=None), [("data", IM, "float32")]),
    "gpt2_decoder": (Gpt2, [("input_ids", (1, 64), "int64")]),
    "cross_decoder": (CrossDecoder, [("src", (1, 64, 256), "float32")]),
    "espcn": (Espcn, [("data", (1, 1, 224, 224), "float32")]),
    "style_transfer": (StyleTransfer, [("data", (1, 3, 224, 224), "float32")]),
    "diffusion_block": (DiffusionBlock, [("latent", (1, 4, 32, 32), "float32"), ("timestep", (1,), "float32")]),
    "resnet18_b4": (lambda: torchvision.models.resnet18(weights=None), [("data", (4, 3, 224, 224), "float32")]),
    "mobilenet_v2_197x263": (lambda: torchvision.models.mobilenet_v2(weights=None),
                             [("data", (1, 3, 197, 263), "float32")]),
    "efficientnet_b1": (lambda: torchvision.models.efficientnet_b1(weights=None), [("data", (1, 3, 240, 240), "float32")]),
    "squeezenet1_0": (lambda: torchvision.models.squeezenet1_0(weights=None), [("data", IM, "float32")]),
    "alexnet": (lambda: torchvision.models.alexnet(weights=None), [("data", IM, "float32")]),
    "shufflenet_v2_x0_5": (lambda: torchvision.models.shufflenet_v2_x0_5(weights=None), [("data", IM, "float32")]),
    "mnasnet0_5": (lambda: torchvision.models.mnasnet0_5(weights=None), [("data", IM, "float32")]),
    "regnet_y_800mf": (lambda: torchvision.models.regnet_y_800mf(weights=None), [("data", IM, "float32")]),
    "vit_b_32": (vit_b_32, [("data", IM, "float32")]),
    "wide_resnet50_2": (lambda: torchvision.models.wide_resnet50_2(weights=None), [("data", IM, "float32")]),
}


def draw_input(name, shape, dtype, gen):
    if dtype == "int64":
        return torch.randint(0, 8192, shape, generator=gen, dtype=torch.int64)
    if name == "timestep":
        return torch.randint(0, 1000, shape, generator=gen).to(torch.float32)
    return torch.randn(shape, generator=gen)


def make(name, out_dir, force):
    d = os.path.join(out_dir, name)
    data = os.path.join(d, "test_data_set_0")
    ctor, inputs = SWEEP[name]
    wanted = [os.path.join(d, "model.onnx"), os.path.join(data, "output_0.pb")] + \
        [os.path.join(data, f"input_{k}.pb") for k in range(len(inputs))]
    if not force and all(os.path.exists(p) for p in wanted):
        print(f"{name}: kept {d}")
        return
    torch.manual_seed(1234)
    model = ctor()
    gen = torch.Generator().manual_seed(42)
    first = inputs[0]
    if first[2] == "float32" and len(inputs) == 1:
        zoo.calibrate_batchnorm(model, first[1], gen)
    else:
        model.eval()
    xs = tuple(draw_input(n, s, t, gen) for n, s, t in inputs)
    with torch.no_grad():
        y = model(*xs)
    os.makedirs(data, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, xs, path, opset_version=zoo.OPSET, input_names=[n for n, _, _ in inputs],
                      output_names=["output"], do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    for k, ((n, _, _), x) in enumerate(zip(inputs, xs)):
        zoo.write_tensor(os.path.join(data, f"input_{k}.pb"), x.numpy(), n)
    zoo.write_tensor(os.path.join(data, "output_0.pb"), y.numpy().astype(np.float32), "output")
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, inputs {[(n, list(s)) for n, s, _ in inputs]}, "
          f"output {list(y.shape)}, {len(m.graph.node)} nodes ({', '.join(ops)})", flush=True)


def main():
    args, names = zoo.parse_selection(__doc__, SWEEP, os.path.join(zoo.REPO, "build", "models-sweep"))
    torch.set_num_threads(1)
    failed = []
    for n in names:
        try:
            make(n, args.out, args.force)
        except Exception as e:  # one family that does not export must not stop the others
            print(f"{n}: FAILED to build: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
            failed.append(n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
