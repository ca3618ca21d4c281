#!/usr/bin/python3
"""A small single-shot detector exported from PyTorch with the post-processing in the graph:
a conv backbone (stride 4), per-cell box deltas decoded against fixed anchors, class scores
(sigmoid, best class per cell), a score threshold (boolean mask indexing: NonZero + Gather),
per-class torchvision.ops.nms (NonMaxSuppression, classes apart by a coordinate offset) and the first 16 kept detections (Slice).
Fixed seeds; PyTorch's outputs on 4 images (different kept counts, one with none) are the
reference, in the ONNX backend-test layout under tests/onnx/detector/detector_torch_nms/ (ctest
onnx.detector_torch_nms, rtol 1e-3). Needs Debian's python3-torch, python3-torchvision and
python3-onnx; run with /usr/bin/python3.
"""
import os
import shutil

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


class Detector(torch.nn.Module):
    def __init__(self, classes=3, size=32):
        super().__init__()
        self.backbone = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, stride=2, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU())
        self.box = torch.nn.Conv2d(32, 4, 1)
        self.cls = torch.nn.Conv2d(32, classes, 1)
        cells = size // 4
        ys, xs = torch.meshgrid(torch.arange(cells), torch.arange(cells), indexing="ij")
        centers = torch.stack([xs, ys], -1).reshape(-1, 2).float() * 4 + 2
        self.register_buffer("centers", centers)   # [cells*cells, 2] anchor centers in pixels
        self.anchor = 6.0

    def forward(self, image):                      # image [1, 3, size, size]
        f = self.backbone(image)
        d = self.box(f).flatten(2)[0].t()           # [cells*cells, 4]: dx, dy, dw, dh
        p = torch.sigmoid(self.cls(f).flatten(2)[0].t())  # [cells*cells, classes]
        xy = self.centers + d[:, :2] * self.anchor
        wh = self.anchor * torch.exp(d[:, 2:].clamp(max=2.0))
        boxes = torch.cat([xy - wh / 2, xy + wh / 2], 1)
        scores, labels = p.max(1)
        keep = scores > 0.44
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        # Per-class NMS by the coordinate offset (what batched_nms does, without its empty-input
        # branch, which exports as an If on the count).
        shifted = boxes + (labels.to(boxes.dtype) * 1000.0)[:, None]
        kept = torchvision.ops.nms(shifted, scores, 0.4)[:16]
        return boxes[kept], scores[kept], labels[kept]


def main():
    torch.manual_seed(24)
    model = Detector()
    with torch.no_grad():
        bn = model.backbone[3]
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 1.5)
        model.cls.bias.fill_(-0.3)
    model.eval()
    d = os.path.join(HERE, "detector_torch_nms")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    images = [torch.randn(1, 3, 32, 32) * s for s in (1.0, 2.0, 0.3, 1.5)]
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, (images[0],), path, opset_version=13, input_names=["image"],
                      output_names=["boxes", "scores", "labels"])
    onnx.checker.check_model(onnx.load(path))
    with torch.no_grad():
        for k, img in enumerate(images):
            outs = model(img)
            sd = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(sd)
            onnx.save_tensor(numpy_helper.from_array(img.numpy(), "image"), os.path.join(sd, "input_0.pb"))
            for i, a in enumerate(outs):
                onnx.save_tensor(numpy_helper.from_array(a.numpy()), os.path.join(sd, f"output_{i}.pb"))
            print(f"image {k}: {len(outs[1])} detections, scores {np.round(outs[1].numpy(), 3)}")


if __name__ == "__main__":
    main()
