"""Image classification with Switchyard from Python, checked against PyTorch.

Builds torchvision's MobileNetV2 (seeded random weights: no downloads; the batch-norm statistics
estimated on random images, so that the logits are not all near zero), exports it to ONNX,
compiles it with Switchyard (native kernels and oneDNN), classifies one image-shaped input and
compares the logits and the top-5 with PyTorch's.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/classify.py
"""
import os
import sys
import tempfile

import numpy as np
import torch
import torchvision

import switchyard as sy


def with_batchnorm_statistics(net):
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # the cumulative average of the batches below
            m.train()
    with torch.no_grad():
        for _ in range(4):
            net(torch.randn(8, 3, 224, 224))
    return net.eval()


def main():
    torch.manual_seed(0)
    net = with_batchnorm_statistics(torchvision.models.mobilenet_v2(num_classes=1000).eval())
    image = torch.rand(1, 3, 224, 224)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mobilenet_v2.onnx")
        torch.onnx.export(net, image, path, input_names=["input"], output_names=["logits"], opset_version=13)
        model = sy.compile(path, backends=["onednn"])
    got = model.run({"input": image.numpy()})["logits"]
    with torch.no_grad():
        want = net(image).numpy()
    top5 = np.argsort(-got[0])[:5]
    print("switchyard top-5:", " ".join(map(str, top5)))
    print("pytorch    top-5:", " ".join(map(str, np.argsort(-want[0])[:5])))
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    print(f"logits in [{want.min():.3f}, {want.max():.3f}]; max |switchyard - pytorch| / max |pytorch| = {err:.2e}")
    if err > 1e-4 or top5[0] != np.argmax(want[0]):
        print("FAIL: Switchyard and PyTorch disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
