#!/usr/bin/python3
"""Builds the generalisation set: 15 model families outside the bench zoo, exported like it.

The bench zoo (make_torch_models.py) is what the default schedules were tuned against; these
models were not looked at when the rules were written, so they show whether a rule generalises:
ConvNeXt (7x7 depthwise, LayerNorm over channels, GELU), Swin (shifted windows, Dropout in
training mode with ratio 0), MnasNet, MobileNet-v3-small, EfficientNet-v2-S (fused MBConv),
Inception-v3 (1x7 / 7x1 convs, 299x299), VGG-11-BN (a 25088x4096 classifier), RegNet-X,
ResNet-34, LR-ASPP segmentation, a UNet (ConvTranspose, concat skips, 256x256), a YOLOv8n-shaped
detector (C2f split/concat, SPPF max pools, nearest upsample, SiLU), a wav2vec2-style audio
encoder (strided Conv1d from one channel, GroupNorm, GELU, attention), a bidirectional LSTM text
classifier and a GRU speech model.

Each model goes to OUT/<name>/ in the same layout as make_torch_models.py (model.onnx,
test_data_set_0 with the PyTorch output), so `loom onnx-test OUT/*` checks them and
`bench/bench_models.py` times them. Needs what make_torch_models.py needs; run it with
/usr/bin/python3.

Usage: make_extra_models.py [--out DIR] [--only NAME[,NAME...]] [--force]
"""
import os
import sys

import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_torch_models as zoo  # noqa: E402


class UNet(nn.Module):
    """A 4-level UNet (32-256 channels): max-pool down, 2x2 ConvTranspose up, concat skips."""

    def __init__(self, c=32):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                                 nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())

        self.e1, self.e2, self.e3, self.e4 = block(3, c), block(c, 2 * c), block(2 * c, 4 * c), block(4 * c, 8 * c)
        self.pool = nn.MaxPool2d(2)
        self.u3 = nn.ConvTranspose2d(8 * c, 4 * c, 2, 2)
        self.u2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2)
        self.u1 = nn.ConvTranspose2d(2 * c, c, 2, 2)
        self.d3, self.d2, self.d1 = block(8 * c, 4 * c), block(4 * c, 2 * c), block(2 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(self.pool(a))
        c = self.e3(self.pool(b))
        d = self.e4(self.pool(c))
        c = self.d3(torch.cat([self.u3(d), c], 1))
        b = self.d2(torch.cat([self.u2(c), b], 1))
        a = self.d1(torch.cat([self.u1(b), a], 1))
        return self.out(a)


def conv_bn_silu(i, o, k=1, stride=1):
    return nn.Sequential(nn.Conv2d(i, o, k, stride, k // 2, bias=False), nn.BatchNorm2d(o), nn.SiLU())


class C2f(nn.Module):
    """YOLOv8's C2f: a 1x1 conv split in two halves, n residual 3x3 pairs, all concatenated."""

    def __init__(self, i, o, n=1):
        super().__init__()
        self.h = o // 2
        self.cv1 = conv_bn_silu(i, o)
        self.cv2 = conv_bn_silu((2 + n) * self.h, o)
        self.m = nn.ModuleList(nn.Sequential(conv_bn_silu(self.h, self.h, 3), conv_bn_silu(self.h, self.h, 3))
                               for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).split((self.h, self.h), 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    """Three chained 5x5 stride-1 max pools concatenated with their input."""

    def __init__(self, i, o):
        super().__init__()
        self.cv1 = conv_bn_silu(i, i // 2)
        self.cv2 = conv_bn_silu(i * 2, o)
        self.m = nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.cv1(x)
        a = self.m(x)
        b = self.m(a)
        return self.cv2(torch.cat([x, a, b, self.m(b)], 1))


class Yolo(nn.Module):
    """YOLOv8n-shaped: C2f backbone, SPPF, nearest-upsample FPN/PAN neck; the three raw head maps
    (84 channels each) flattened and concatenated."""

    def __init__(self):
        super().__init__()
        self.b1 = nn.Sequential(conv_bn_silu(3, 16, 3, 2), conv_bn_silu(16, 32, 3, 2), C2f(32, 32),
                                conv_bn_silu(32, 64, 3, 2), C2f(64, 64, 2))
        self.b2 = nn.Sequential(conv_bn_silu(64, 128, 3, 2), C2f(128, 128, 2))
        self.b3 = nn.Sequential(conv_bn_silu(128, 256, 3, 2), C2f(256, 256), SPPF(256, 256))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.n1, self.n2 = C2f(384, 128), C2f(192, 64)
        self.d1, self.n3 = conv_bn_silu(64, 64, 3, 2), C2f(192, 128)
        self.d2, self.n4 = conv_bn_silu(128, 128, 3, 2), C2f(384, 256)
        self.heads = nn.ModuleList(nn.Sequential(conv_bn_silu(c, 64, 3), nn.Conv2d(64, 84, 1)) for c in (64, 128, 256))

    def forward(self, x):
        p3 = self.b1(x)
        p4 = self.b2(p3)
        p5 = self.b3(p4)
        t4 = self.n1(torch.cat([self.up(p5), p4], 1))
        t3 = self.n2(torch.cat([self.up(t4), p3], 1))
        u4 = self.n3(torch.cat([self.d1(t3), t4], 1))
        u5 = self.n4(torch.cat([self.d2(u4), p5], 1))
        return torch.cat([h(t).flatten(2) for h, t in zip(self.heads, (t3, u4, u5))], 2)


class AudioConv(nn.Module):
    """A wav2vec2-style feature encoder (7 strided Conv1d from the one-channel waveform, GroupNorm
    after the first, GELU), 2 post-norm transformer layers and a 35-keyword classifier."""

    def __init__(self):
        super().__init__()
        layers = []
        for i, (k, stride) in enumerate(zip((10, 3, 3, 3, 3, 2, 2), (5, 2, 2, 2, 2, 2, 2))):
            layers.append(nn.Conv1d(1 if i == 0 else 256, 256, k, stride, bias=False))
            if i == 0:
                layers.append(nn.GroupNorm(256, 256))
            layers.append(nn.GELU())
        self.features = nn.Sequential(*layers)
        self.proj = nn.Linear(256, 256)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(256, 4, 512, 0.0, "gelu", batch_first=True), 2)
        self.classifier = nn.Linear(256, 35)

    def forward(self, x):
        f = self.features(x).transpose(1, 2)
        return self.classifier(self.encoder(self.proj(f)).mean(1))


class TextLstm(nn.Module):
    """Token embedding, a 2-layer bidirectional LSTM, a classifier on the last step."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(8192, 128)
        self.rnn = nn.LSTM(128, 256, 2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(512, 10)

    def forward(self, x):
        y, _ = self.rnn(self.embedding(x))
        return self.fc(y[:, -1])


class SpeechGru(nn.Module):
    """A 2-layer GRU over 80 mel features with a per-frame 29-symbol classifier."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(80, 256, 2, batch_first=True)
        self.fc = nn.Linear(256, 29)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class SegmentationOut(nn.Module):
    """A torchvision segmentation model's 'out' map only."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


IM = (1, 3, 224, 224)
EXTRA = {
    "convnext_tiny": (lambda: torchvision.models.convnext_tiny(weights=None), "data", IM, "float32"),
    "swin_t": (lambda: torchvision.models.swin_t(weights=None), "data", IM, "float32"),
    "mnasnet1_0": (lambda: torchvision.models.mnasnet1_0(weights=None), "data", IM, "float32"),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), "data", IM, "float32"),
    "efficientnet_v2_s": (lambda: torchvision.models.efficientnet_v2_s(weights=None), "data", IM, "float32"),
    "inception_v3": (lambda: torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True), "data", (1, 3, 299, 299), "float32"),
    "vgg11_bn": (lambda: torchvision.models.vgg11_bn(weights=None), "data", IM, "float32"),
    "regnet_x_400mf": (lambda: torchvision.models.regnet_x_400mf(weights=None), "data", IM, "float32"),
    "resnet34": (lambda: torchvision.models.resnet34(weights=None), "data", IM, "float32"),
    "lraspp_mobilenet": (lambda: SegmentationOut(torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)), "data", (1, 3, 256, 256), "float32"),
    "unet": (UNet, "data", (1, 3, 256, 256), "float32"),
    "yolo_c2f": (Yolo, "data", (1, 3, 320, 320), "float32"),
    "audio_conv1d": (AudioConv, "data", (1, 1, 16000), "float32"),
    "text_lstm": (TextLstm, "input_ids", (1, 64), "int64"),
    "speech_gru": (SpeechGru, "data", (1, 100, 80), "float32"),
}


def main():
    args, names = zoo.parse_selection(__doc__, EXTRA, os.path.join(zoo.REPO, "build", "models-extra"))
    zoo.ZOO.update(EXTRA)  # make() builds by name from the zoo's table
    torch.set_num_threads(2)
    for n in names:
        zoo.make(n, args.out, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
