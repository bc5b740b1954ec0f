#!/usr/bin/python3
"""Exports the model-test zoo from PyTorch to ONNX, with seeded inputs and PyTorch's reference outputs.

For each requested model, OUT_DIR/<model>/ receives:
  model.onnx               the exported graph (constant folding on, named inputs/outputs)
  <input>.npy              one seeded input per graph input (here always "input.npy")
  reference/<output>.npy   PyTorch's outputs for those inputs, one file per ONNX output
  meta.json                input/output names and shapes, opset, output std, export time

A model is skipped when its meta.json exists, is newer than this script, and every file it
lists exists (meta.json is written last, so an interrupted export is redone).

Run with Debian's interpreter: /usr/bin/python3 export_models.py --out-dir DIR MODEL...
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision

from export_cache import is_fresh

SEED = 0
THREADS = 2  # fixed so that the reference outputs are reproducible run to run
IMAGE = (1, 3, 224, 224)

# BatchNorm re-estimation: batches of random images run through the network with only the BN
# layers in train mode (cumulative average, momentum=None). Random init leaves mean 0 / var 1,
# which after dozens of layers shrinks activations to ~1e-9 and makes comparisons meaningless.
BN_BATCHES = 4
BN_BATCH_SIZE = 8


def build_torchvision(name, **kwargs):
    ctor = getattr(torchvision.models, name)
    return ctor(weights=None, **kwargs)


def build_with_xavier_linears(name, **kwargs):
    # torchvision initialises MobileNetV3's classifier with N(0, 0.01) and ViT's head with zeros,
    # which leaves logits of order 1e-2 or exactly 0 (nothing to compare); Xavier keeps them of
    # order 1.
    model = build_torchvision(name, **kwargs)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Linear):
                torch.nn.init.xavier_uniform_(module.weight)
    return model


class SegmentationOut(torch.nn.Module):
    """A torchvision segmentation model's "out" map alone (its forward returns a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def build_segmentation(name):
    ctor = getattr(torchvision.models.segmentation, name)
    return SegmentationOut(ctor(weights=None, weights_backbone=None, aux_loss=False))


class Encoder(torch.nn.Module):
    """BERT-base-style encoder: 4 post-norm layers, d_model 768, 12 heads, FFN 3072, GELU."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(
            d_model=768, nhead=12, dim_feedforward=3072, dropout=0.0,
            activation="gelu", batch_first=True, norm_first=False)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=4,
                                                   enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class UNet(torch.nn.Module):
    """A small image-to-image U-Net: transposed convs of the three usual kinds (2x2 stride 2, 4x4
    stride 2 padding 1, 3x3 stride 2 padding 1 output padding 1), group and instance norms, nearest
    upsampling, skip concatenations, a pixel shuffle and an image output (tanh * 0.5 + 0.5)."""

    def __init__(self):
        super().__init__()
        nn = torch.nn

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.GroupNorm(8, o), nn.SiLU(),
                                 nn.Conv2d(o, o, 3, padding=1), nn.InstanceNorm2d(o, affine=True),
                                 nn.LeakyReLU(0.1))

        self.down1, self.down2, self.down3 = block(3, 32), block(32, 64), block(64, 128)
        self.bottom = nn.Conv2d(128, 128, 3, stride=2, padding=1)
        self.up_bottom = nn.ConvTranspose2d(128, 128, 3, stride=2, padding=1, output_padding=1)
        self.up3 = nn.ConvTranspose2d(128, 64, 2, stride=2)
        self.block3 = block(128, 64)
        self.up2 = nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1)
        self.block2 = block(64, 32)
        self.up1 = nn.Upsample(scale_factor=2, mode="nearest")
        self.block1 = block(32 + 32, 32)
        self.out = nn.Conv2d(32, 12, 1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        F = torch.nn.functional
        a = self.down1(x)                              # 32 x 128
        b = self.down2(F.max_pool2d(a, 2))             # 64 x 64
        c = self.down3(F.avg_pool2d(b, 2))             # 128 x 32
        c = c + self.up_bottom(self.bottom(c))         # 128 x 32
        u = self.block3(torch.cat([self.up3(c), b], 1))  # 64 x 64
        u = self.block2(torch.cat([self.up2(u), a], 1))  # 32 x 128
        u = self.block1(torch.cat([self.up1(F.avg_pool2d(u, 2)), a], 1))  # 32 x 128
        return torch.tanh(self.shuffle(self.out(u))) * 0.5 + 0.5  # 3 x 256


class RecurrentTagger(torch.nn.Module):
    """A sequence tagger: embedding, a 2-layer bidirectional LSTM, a bidirectional GRU, a linear
    head per token. The input is float (the test harness makes float inputs); token ids are
    derived from it inside the model (Abs, Mul, Cast, Clip, Gather)."""

    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(1000, 128)
        self.lstm = torch.nn.LSTM(128, 192, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = torch.nn.GRU(384, 96, bidirectional=True, batch_first=True)
        self.head = torch.nn.Linear(192, 10)

    def forward(self, x):
        ids = (x.abs() * 300).long().clamp(0, 999)
        h, _ = self.lstm(self.embedding(ids))
        h, _ = self.gru(h)
        return self.head(h)


class FakeQuantCNN(torch.nn.Module):
    """A quantized MobileNetV2 block in small as quantization-aware training leaves it: uint8
    fake quantization of the activations (fixed scales and zero points) and int8 per-channel
    fake quantization of the weights, their scales computed in the graph. The export is QDQ
    (QuantizeLinear/DequantizeLinear pairs); PyTorch computes the same rounding in float."""

    class Conv(torch.nn.Module):
        def __init__(self, i, o, k, stride=1, groups=1, act=True):
            super().__init__()
            self.conv = torch.nn.Conv2d(i, o, k, stride, k // 2, groups=groups)
            self.act = act

        def forward(self, x):
            c = self.conv
            y = torch.nn.functional.conv2d(x, FakeQuantCNN.weight(c.weight), c.bias, c.stride, c.padding, groups=c.groups)
            return torch.nn.functional.relu6(y) if self.act else y

    @staticmethod
    def weight(w):
        s = (w.detach().abs().amax(dim=tuple(range(1, w.dim()))) / 127.0).clamp(min=1e-8)
        return torch.fake_quantize_per_channel_affine(w, s, torch.zeros_like(s, dtype=torch.int32), 0, -128, 127)

    @staticmethod
    def act(x, lo, hi):
        s = (hi - lo) / 255.0
        return torch.fake_quantize_per_tensor_affine(x, s, int(round(-lo / s)), 0, 255)

    def __init__(self):
        super().__init__()
        C = FakeQuantCNN.Conv
        self.convs = torch.nn.ModuleList([C(3, 32, 3, 2), C(32, 32, 3, 1, 32), C(32, 16, 1, act=False), C(16, 96, 1),
                                          C(96, 96, 3, 2, 96), C(96, 24, 1, act=False)])
        self.ranges = [(-3, 3), (0, 6), (0, 6), (-8, 8), (0, 6), (0, 6)]
        self.fc = torch.nn.Linear(24, 10)

    def forward(self, x):
        for conv, (lo, hi) in zip(self.convs, self.ranges):
            x = conv(FakeQuantCNN.act(x, lo, hi))
        x = FakeQuantCNN.act(x, -8, 8).mean((2, 3))
        return torch.nn.functional.linear(x, FakeQuantCNN.weight(self.fc.weight), self.fc.bias)


# name -> (builder, input shape, output name, opset, needs BN re-estimation)
MODELS = {
    "resnet18": (lambda: build_torchvision("resnet18"), IMAGE, "logits", 13, True),
    "mobilenet_v2": (lambda: build_torchvision("mobilenet_v2"), IMAGE, "logits", 13, True),
    "encoder": (Encoder, (1, 128, 768), "hidden", 14, False),
    "resnet50": (lambda: build_torchvision("resnet50"), IMAGE, "logits", 13, True),
    "densenet121": (lambda: build_torchvision("densenet121"), IMAGE, "logits", 13, True),
    "efficientnet_b0": (lambda: build_torchvision("efficientnet_b0"), IMAGE, "logits", 13, True),
    # Hard-swish activations and squeeze-excitation with hard-sigmoid (opset 14 has HardSwish).
    "mobilenet_v3_small": (lambda: build_with_xavier_linears("mobilenet_v3_small"), IMAGE, "logits", 14, True),
    # Grouped convolutions (groups of 8 channels) with squeeze-excitation: natively, grouped convs
    # had only unscheduled loops; in oneDNN, its 8-channel blocks met the SE multiply's reference
    # kernel.
    "regnet_y_400mf": (lambda: build_with_xavier_linears("regnet_y_400mf"), IMAGE, "logits", 14, True),
    # Grouped convolutions of 16-channel groups, whole vectors of output channels with AVX-512 and
    # AVX2 (conv2d.grouped_blocked); over the flattened plane they made it 1.5x ORT's time.
    "regnet_x_400mf": (lambda: build_with_xavier_linears("regnet_x_400mf"), IMAGE, "logits", 14, True),
    # Models from outside the benchmark set, which first found what the set did not: channel
    # concatenations of every width (the Fire and Inception modules), max pools with ceil_mode,
    # a 3x3 max pool of stride 1 beside convs, a classifier conv of 1000 channels before a global
    # average pool. NHWC chains through concatenations by default made both slower (see
    # src/topi/nn_concat_nhwc.cpp).
    "squeezenet1_1": (lambda: build_torchvision("squeezenet1_1"), IMAGE, "logits", 13, False),
    "googlenet": (lambda: build_with_xavier_linears("googlenet", aux_logits=False, init_weights=True),
                  IMAGE, "logits", 13, True),
    # Semantic segmentation (21 classes): a backbone with dilated depthwise convs, an atrous
    # pyramid whose rates (12, 24, 36) reach beyond the 14x14 map (at 24 and 36 every tap but the
    # centre reads only padding; src/passes/conv_dead_taps.h), bilinear upsampling of the logits.
    "deeplabv3_mobilenet_v3_large": (lambda: build_segmentation("deeplabv3_mobilenet_v3_large"), IMAGE, "out", 14,
                                     True),
    # Image to image: transposed convs (each a stride-phase conv natively; computed as defined,
    # U-Net's 2x2 upsampling ran at 1 GFLOP/s, 71% of the model), group and instance norms, a
    # pixel shuffle, an output of 3 channels scaled and shifted by scalars.
    "unet": (UNet, (1, 3, 128, 128), "image", 14, False),
    # Recurrent layers (ONNX LSTM and GRU, unrolled over 40 steps by the importer).
    "recurrent_tagger": (RecurrentTagger, (1, 40), "tags", 14, False),
    # Quantized (QDQ) as quantization-aware training exports it (uint8 activations, int8 weights).
    "fake_quant_cnn": (FakeQuantCNN, (1, 3, 64, 64), "logits", 13, False),
    # Benchmark only (330 MB): a vision transformer, 12 layers of 768 wide attention on 197 tokens.
    "vit_b_16": (lambda: build_with_xavier_linears("vit_b_16"), IMAGE, "logits", 14, False),
}


def seed_everything(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)


def randomize_parameters(model):
    """Makes every normalisation scale/shift and every bias random and distinct.

    Default init leaves norm scales at 1 and shifts at 0 (so a kernel ignoring them would pass),
    and TransformerEncoder deep-copies one layer, so all its layers would share identical weights
    (the exporter then even de-duplicates them). Matrices get a fresh Xavier init per tensor.
    """
    with torch.no_grad():
        for module in model.modules():
            norms = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.LayerNorm, torch.nn.GroupNorm,
                     torch.nn.modules.instancenorm._InstanceNorm)
            if isinstance(module, norms) and module.weight is not None:
                module.weight.normal_(1.0, 0.1)
                module.bias.normal_(0.0, 0.1)
        if isinstance(model, Encoder):
            for name, p in model.named_parameters():
                if "norm" in name:
                    continue
                if p.dim() > 1:
                    torch.nn.init.xavier_uniform_(p)
                else:
                    p.normal_(0.0, 0.05)


def reestimate_batchnorm(model, image_shape):
    """Replaces the BN running statistics by the cumulative batch statistics of random images."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    model.eval()  # dropout / stochastic depth stay off; only BN layers see train mode
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
        bn.train()
    gen = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for _ in range(BN_BATCHES):
            model(torch.randn((BN_BATCH_SIZE,) + tuple(image_shape[1:]), generator=gen))
    model.eval()
    return len(bns)


def export_one(name, out_dir):
    builder, input_shape, output_name, opset, reestimate_bn = MODELS[name]
    model_dir = os.path.join(out_dir, name)
    os.makedirs(os.path.join(model_dir, "reference"), exist_ok=True)
    meta_path = os.path.join(model_dir, "meta.json")
    if os.path.exists(meta_path):
        os.remove(meta_path)  # an interrupted re-export must not look fresh

    start = time.perf_counter()
    seed_everything(SEED)
    model = builder()
    model.eval()
    randomize_parameters(model)
    num_bn = reestimate_batchnorm(model, input_shape) if reestimate_bn else 0

    gen = torch.Generator().manual_seed(SEED + 2)
    x = torch.randn(input_shape, generator=gen)
    with torch.no_grad():
        y = model(x)
    y_np = y.detach().numpy().astype(np.float32)

    onnx_path = os.path.join(model_dir, "model.onnx")
    torch.onnx.export(model, (x,), onnx_path, opset_version=opset, do_constant_folding=True,
                      input_names=["input"], output_names=[output_name],
                      training=torch.onnx.TrainingMode.EVAL)
    np.save(os.path.join(model_dir, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(model_dir, "reference", output_name + ".npy"), y_np)
    elapsed = time.perf_counter() - start

    meta = {
        "model": name,
        "opset": opset,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "seed": SEED,
        "batchnorm_layers_reestimated": num_bn,
        "inputs": [{"name": "input", "file": "input.npy", "shape": list(input_shape),
                    "dtype": "float32"}],
        "outputs": [{"name": output_name, "file": "reference/" + output_name + ".npy",
                     "shape": list(y_np.shape), "dtype": "float32",
                     "std": float(y_np.std()), "max_abs": float(np.abs(y_np).max())}],
        "export_seconds": round(elapsed, 2),
    }
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=2)
    os.replace(meta_path + ".tmp", meta_path)
    print(f"{name}: exported in {elapsed:.1f} s (opset {opset}, {num_bn} BN layers re-estimated); "
          f"output {output_name} shape {list(y_np.shape)} std {y_np.std():.4g} "
          f"max|y| {np.abs(y_np).max():.4g}")
    if not 1e-2 < float(y_np.std()) < 1e3:
        print(f"{name}: output std {y_np.std():.3g} is not of order 1; the comparison would be "
              f"meaningless", file=sys.stderr)
        return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", required=True,
                        help="directory in the build tree; each model gets a subdirectory")
    parser.add_argument("--force", action="store_true", help="re-export even if cached")
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help=f"models to export (default: all of {', '.join(MODELS)})")
    args = parser.parse_args()

    names = args.models or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")

    torch.set_num_threads(THREADS)
    script_mtime = os.path.getmtime(os.path.abspath(__file__))
    ok = True
    for name in names:
        model_dir = os.path.join(args.out_dir, name)
        if not args.force and is_fresh(model_dir, script_mtime):
            print(f"{name}: cached in {model_dir}")
            continue
        ok = export_one(name, args.out_dir) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
