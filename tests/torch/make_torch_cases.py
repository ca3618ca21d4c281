#!/usr/bin/python3
"""Makes the TorchScript per-op test cases: tiny traced and scripted modules with fixed seeds.

For each case NAME it writes OUT/NAME.pt (torch.jit.save), OUT/NAME.npz (the inputs, by forward()
argument name, and PyTorch's outputs as output_0, output_1, ...) and a line "NAME|INPUT-SHAPES"
in OUT/cases.txt. Run with Debian's python3-torch: /usr/bin/python3 make_torch_cases.py OUT
"""
import inspect
import os
import sys
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Fn(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return self.f(x)


class Fn2(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x, y):
        return self.f(x, y)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x))) + x


class LoopIf(nn.Module):
    """Scripted: a ModuleList loop, a constant if on an attribute, shape arithmetic."""

    def __init__(self, use_norm: bool = True):
        super().__init__()
        self.blocks = nn.ModuleList([Block(4) for _ in range(3)])
        self.use_norm = use_norm
        self.norm = nn.GroupNorm(2, 4)
        self.repeats = 2

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        if self.use_norm:
            x = self.norm(x)
        else:
            x = x * 2.0
        for i in range(self.repeats):
            x = x + float(i)
        if x.dim() == 4 and x.size(1) > 2:
            x = torch.flatten(x, 1)
        return x


class Interp(nn.Module):
    def forward(self, x):
        a = F.interpolate(x, scale_factor=2.0, mode="nearest")
        b = F.interpolate(x, size=[7, 9], mode="bilinear", align_corners=False)
        c = F.interpolate(x, size=[6, 6], mode="bilinear", align_corners=True)
        return a, b, c


class Tuple(nn.Module):
    def forward(self, x):
        a, b = torch.chunk(x, 2, dim=1)
        parts = torch.split(x, [1, 3], dim=1)
        y = torch.cat([b, a], dim=1)
        z = torch.stack([a, b], dim=2)
        return y, z.sum(dim=2), parts[1].mean(dim=[2, 3], keepdim=True)


class Inplace(nn.Module):
    def forward(self, x):
        y = x.clone()
        y.add_(1.0)
        y.mul_(2.0)
        y = F.relu_(y - 3.0)
        z = torch.zeros_like(x)
        z += y
        return z, y.sub(1, alpha=2)


class Sizes(nn.Module):
    def forward(self, x):
        n, c, h, w = x.size()
        y = x.view(n, c, h * w).permute(0, 2, 1).contiguous()
        y = y.reshape(-1, c)
        s = torch.tensor(float(h)) * x.numel()
        return y * 2 + s / 1000.0


class Creation(nn.Module):
    def forward(self, x):
        r = torch.arange(x.size(-1), dtype=torch.float32)
        o = torch.ones(1, x.size(1), 1, 1) * 0.5
        f = torch.full([1, 1, 1, x.size(3)], 3.0)
        return x + r + o + f + torch.zeros(x.shape)


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.ln = nn.LayerNorm(8)

    def forward(self, ids):
        e = self.emb(ids)
        pos = torch.arange(ids.size(1))
        return self.ln(e + pos.unsqueeze(0).unsqueeze(-1).float() * 0.1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, 2, 8).transpose(1, 2)
        k = k.view(b, t, 2, 8).transpose(1, 2)
        v = v.view(b, t, 2, 8).transpose(1, 2)
        a = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / 8 ** 0.5, dim=-1)
        y = torch.matmul(a, v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


def cases():
    """(name, module, example inputs {name: tensor}, script?)"""
    g = torch.Generator().manual_seed(0)
    img = lambda *s: torch.randn(*s, generator=g)
    out = []

    def add(name, m, inputs, script=False):
        out.append((name, m, inputs, script))

    add("conv2d", nn.Conv2d(3, 8, 3, stride=2, padding=1), {"x": img(1, 3, 9, 9)})
    add("conv2d_groups_dilation", nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=4), {"x": img(1, 8, 10, 10)})
    add("conv2d_depthwise_script", nn.Conv2d(6, 6, 3, padding=1, groups=6, bias=False), {"x": img(2, 6, 7, 7)}, True)
    add("conv_transpose2d", nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), {"x": img(1, 4, 5, 5)})
    add("conv1d", nn.Conv1d(4, 6, 3, padding=1), {"x": img(2, 4, 11)})
    add("batch_norm", nn.BatchNorm2d(5), {"x": img(2, 5, 4, 4)})
    add("linear", nn.Linear(12, 7), {"x": img(3, 12)})
    add("linear_3d", nn.Linear(12, 7, bias=False), {"x": img(2, 3, 12)})
    add("addmm", Fn2(lambda a, b: torch.addmm(torch.ones(4), a, b, beta=0.5, alpha=2.0)), {"x": img(3, 5), "y": img(5, 4)})
    add("matmul_bmm", Fn2(lambda a, b: torch.bmm(a, b) + torch.matmul(a, b[0])), {"x": img(2, 3, 5), "y": img(2, 5, 4)})
    for act in ["relu", "hardswish", "hardsigmoid", "silu", "gelu", "sigmoid", "tanh"]:
        add("act_" + act, Fn(getattr(F, act)), {"x": img(2, 3, 4, 5) * 4})
    add("act_gelu_tanh", Fn(lambda x: F.gelu(x, approximate="tanh")), {"x": img(2, 9) * 3})
    add("act_hardtanh_relu6", Fn(lambda x: F.hardtanh(x, -0.5, 0.7) + F.relu6(x * 5)), {"x": img(2, 8)})
    add("act_inplace_script", nn.Sequential(nn.ReLU(inplace=True), nn.Hardswish(inplace=True)), {"x": img(2, 6)}, True)
    add("softmax", Fn(lambda x: F.softmax(x, dim=1) + F.log_softmax(x, dim=-1)), {"x": img(2, 5, 3)})
    add("layer_norm", nn.LayerNorm([4, 5]), {"x": img(2, 3, 4, 5)})
    add("group_norm", nn.GroupNorm(3, 6), {"x": img(2, 6, 3, 3)})
    add("pools", Fn(lambda x: F.max_pool2d(x, 3, 2, 1) + F.avg_pool2d(x, 3, 2, 1)), {"x": img(1, 3, 9, 9)})
    add("pool_ceil", Fn(lambda x: F.max_pool2d(x, 2, 2, ceil_mode=True)), {"x": img(1, 2, 7, 7)})
    add("avg_pool_count", Fn(lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)), {"x": img(1, 2, 5, 5)})
    add("adaptive_avg_pool", Fn(lambda x: F.adaptive_avg_pool2d(x, 1).flatten(1) + F.adaptive_avg_pool2d(x, (2, 3)).sum()),
        {"x": img(2, 4, 6, 6)})
    add("interpolate", Interp(), {"x": img(1, 2, 4, 5)})
    add("interpolate_script", Interp(), {"x": img(1, 2, 4, 5)}, True)
    add("chunk_split_cat", Tuple(), {"x": img(2, 4, 3, 3)})
    add("chunk_split_cat_script", Tuple(), {"x": img(2, 4, 3, 3)}, True)
    add("slice_select_index", Fn(lambda x: x[:, 1:3, ::2] * x[:, 0:1, 1::2].select(2, 0).unsqueeze(2)
                                  + torch.index_select(x, 1, torch.tensor([2, 0, 1, 1]))[:, :2, :3]),
        {"x": img(2, 4, 6)})
    add("transpose_permute", Fn(lambda x: x.transpose(1, 2).permute(2, 0, 1).flatten(0, 1)), {"x": img(2, 3, 4)})
    add("expand_repeat", Fn(lambda x: x[:, :1, :1].expand(-1, 3, 4) + x.repeat(1, 1, 2)[:, :, :4]), {"x": img(2, 3, 2)})
    add("arith_scalars", Fn2(lambda a, b: (a + b * 2 - 1) / (b.abs() + 1) + 3 - a * 0.5 + torch.rsub(a, 2.0)),
        {"x": img(2, 3), "y": img(2, 3)})
    add("arith_inplace", Inplace(), {"x": img(2, 3)})
    add("reductions", Fn(lambda x: (x.mean(dim=1), x.sum(dim=[0, 2], keepdim=True), torch.amax(x, dim=-1), x.sum())),
        {"x": img(2, 3, 4)})
    add("clamp", Fn(lambda x: torch.clamp(x, min=-0.5, max=0.5) + x.clamp(min=0.1)), {"x": img(3, 4)})
    add("dropout", nn.Sequential(nn.Dropout(0.5), nn.Linear(4, 4), nn.Dropout2d(0.2)), {"x": img(2, 4)})
    add("embedding", Embed(), {"ids": torch.randint(0, 20, (2, 6), generator=g)})
    add("sizes", Sizes(), {"x": img(2, 3, 4, 5)})
    add("sizes_script", Sizes(), {"x": img(2, 3, 4, 5)}, True)
    add("creation", Creation(), {"x": img(1, 3, 2, 4)})
    add("channel_shuffle", Fn(lambda x: F.channel_shuffle(x, 2) if hasattr(F, "channel_shuffle")
                              else torch.channel_shuffle(x, 2)), {"x": img(1, 6, 2, 2)})
    add("attention", Attention(), {"x": img(2, 5, 16)})
    add("loop_if_script", LoopIf(), {"x": img(1, 4, 5, 5)}, True)
    return out


class Unsupported(nn.Module):
    def forward(self, x):
        y = torch.cumsum(x, dim=1)
        z = torch.sort(y, dim=1)[0]
        return torch.fft.fft(z).real + y


class DataDependentIf(nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            return x * 2
        return x


class UpsampleToNothing(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=0.1, mode="nearest")


def error_cases(out_dir):
    """Models the importer must refuse with a clear message (checked by the test)."""
    torch.jit.save(torch.jit.script(Unsupported()), os.path.join(out_dir, "err_unsupported.pt"))
    torch.jit.save(torch.jit.script(DataDependentIf()), os.path.join(out_dir, "err_data_if.pt"))
    # A 4 x 4 image scaled by 0.1 has no pixel left (PyTorch refuses it when it runs).
    torch.jit.save(torch.jit.script(UpsampleToNothing()), os.path.join(out_dir, "err_upsample_empty.pt"))


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "torch-cases"
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    lines = []
    for name, m, inputs, script in cases():
        torch.manual_seed(zlib.crc32(name.encode()) % 1000)
        m.eval()
        for mod in m.modules():  # non-trivial batch-norm statistics
            if isinstance(mod, nn.modules.batchnorm._BatchNorm):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.data.uniform_(0.5, 1.5)
                mod.bias.data.uniform_(-0.5, 0.5)
        # Name the inputs after forward()'s arguments (nn.Conv2d's is `input`).
        params = list(inspect.signature(m.forward).parameters)
        inputs = dict(zip(params, inputs.values()))
        saved = {k: v.numpy().copy() for k, v in inputs.items()}  # in-place modules change their inputs
        args = tuple(inputs.values())
        with torch.no_grad():
            ts = torch.jit.script(m) if script else torch.jit.trace(m, tuple(a.clone() for a in args))
            res = m(*(a.clone() for a in args))
        path = os.path.join(out_dir, name + ".pt")
        torch.jit.save(ts, path)
        flat = []

        def flatten(v):
            if isinstance(v, (tuple, list)):
                for x in v:
                    flatten(x)
            else:
                flat.append(v)
        flatten(res)
        arrays = dict(saved)
        for i, v in enumerate(flat):
            arrays[f"output_{i}"] = v.numpy()
        np.savez(os.path.join(out_dir, name + ".npz"), **arrays)
        shapes = ",".join(f"{k}:[{','.join(str(d) for d in v.shape)}]" + (":int64" if v.dtype == torch.int64 else "")
                          for k, v in inputs.items())
        lines.append(f"{name}|{shapes}")
    error_cases(out_dir)
    with open(os.path.join(out_dir, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
