#!/usr/bin/python3
"""3-D convolutions, pools and resizes (ONNX Conv, ConvTranspose, MaxPool, AveragePool, Resize on
N, C, D, H, W; Resize on N, C, L too) against PyTorch: strides, dilations, paddings,
output_padding, groups, depthwise, bias or none, ceil_mode, count_include_pad, interpolation modes.
One model computes every case as its own output; one `switchyard run` per path.

  nn3d_vs_torch.py --binary build/bin/switchyard --work DIR [-- RUN ARGS...]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from oracle_run import parse_args, run_and_compare  # noqa: E402

nn = torch.nn

# (name, module, input shape)
CASES = [
    ("conv_3x3x3_pad1", nn.Conv3d(4, 8, 3, padding=1), (1, 4, 5, 6, 7)),
    ("conv_stem_3x7x7_s122", nn.Conv3d(3, 8, (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3), bias=False), (1, 3, 4, 13, 12)),
    ("conv_temporal_3x1x1", nn.Conv3d(6, 5, (3, 1, 1), padding=(1, 0, 0)), (2, 6, 6, 4, 5)),
    ("conv_spatial_1x3x3_s2", nn.Conv3d(6, 5, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)), (1, 6, 3, 9, 8)),
    ("conv_strided_depth_s2", nn.Conv3d(4, 6, 3, stride=2, padding=1), (1, 4, 7, 8, 9)),
    ("conv_dilated", nn.Conv3d(4, 4, 3, dilation=(2, 1, 2), padding=(2, 1, 2)), (1, 4, 6, 5, 7)),
    ("conv_groups2", nn.Conv3d(8, 6, 3, groups=2, padding=(0, 1, 1)), (1, 8, 4, 5, 5)),
    ("conv_depthwise", nn.Conv3d(8, 8, 3, groups=8, padding=1), (1, 8, 4, 6, 6)),
    ("conv_patch_3x7x7_s244", nn.Conv3d(3, 16, (3, 7, 7), stride=(2, 4, 4), padding=(1, 3, 3)), (1, 3, 8, 16, 16)),
    # Transposed: a 3-D U-Net's 2x upsampling, overlapping taps with output_padding, no bias,
    # groups with a dilated depth, a stride longer than the kernel (gaps), depth only.
    ("convT_2_s2", nn.ConvTranspose3d(8, 4, 2, stride=2), (1, 8, 3, 4, 5)),
    ("convT_3_s2_pad1_outpad1", nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1), (1, 4, 3, 5, 4)),
    ("convT_3_pad1_nobias", nn.ConvTranspose3d(5, 3, 3, padding=1, bias=False), (2, 5, 4, 4, 3)),
    ("convT_groups2_dilated", nn.ConvTranspose3d(6, 4, (2, 3, 3), stride=(1, 2, 2), groups=2, dilation=(2, 1, 1)),
     (1, 6, 3, 4, 4)),
    ("convT_k2_s3", nn.ConvTranspose3d(3, 3, 2, stride=3), (1, 3, 2, 3, 3)),
    ("convT_depth_3x1x1_s2", nn.ConvTranspose3d(4, 4, (3, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0)), (1, 4, 5, 3, 3)),
    ("maxpool_3", nn.MaxPool3d(3, stride=1, padding=1), (1, 4, 5, 6, 6)),
    ("maxpool_1x3x3_s122", nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)), (1, 4, 4, 9, 9)),
    ("maxpool_2_s2_ceil", nn.MaxPool3d(2, stride=2, ceil_mode=True), (1, 3, 5, 7, 6)),
    ("maxpool_3_s2_pad1_ceil", nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True), (1, 3, 6, 6, 7)),
    ("maxpool_dilated", nn.MaxPool3d(2, stride=1, dilation=2), (1, 2, 6, 5, 6)),
    ("avgpool_2x7x7", nn.AvgPool3d((2, 7, 7), stride=1), (1, 4, 3, 7, 7)),
    ("avgpool_3_pad1_exclude", nn.AvgPool3d(3, stride=1, padding=1, count_include_pad=False), (1, 3, 4, 5, 6)),
    ("avgpool_3_pad1_include", nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=True), (1, 3, 5, 6, 7)),
    ("avgpool_2_s2_ceil", nn.AvgPool3d(2, stride=2, ceil_mode=True, count_include_pad=False), (1, 3, 5, 7, 6)),
    ("global_avgpool", nn.AdaptiveAvgPool3d(1), (1, 5, 3, 4, 4)),
    # Resizes of 3 (and 1) spatial axes, composed of 2-D ones: trilinear, with align_corners to a
    # size, nearest over the planes only, a 0.5 scale of odd sizes; linear and nearest 1-D.
    ("upsample_trilinear_x2", nn.Upsample(scale_factor=2, mode="trilinear"), (1, 4, 3, 5, 6)),
    ("upsample_trilinear_ac_size", nn.Upsample(size=(5, 7, 4), mode="trilinear", align_corners=True), (1, 3, 3, 4, 6)),
    ("upsample_nearest_x122", nn.Upsample(scale_factor=(1, 2, 2), mode="nearest"), (1, 4, 3, 4, 5)),
    ("downsample_trilinear_half_odd", nn.Upsample(scale_factor=0.5, mode="trilinear"), (1, 2, 5, 7, 9)),
    ("upsample_linear_1d_x3", nn.Upsample(scale_factor=3, mode="linear"), (1, 4, 7)),
    ("upsample_nearest_1d_size", nn.Upsample(size=11, mode="nearest"), (2, 3, 5)),
]


class All(nn.Module):
    def __init__(self):
        super().__init__()
        self.ops = nn.ModuleList([m for _, m, _ in CASES])

    def forward(self, *xs):
        return tuple(op(x) for op, x in zip(self.ops, xs))


def main():
    a = parse_args(__doc__)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = All().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv3d, nn.ConvTranspose3d)) and m.bias is not None:
                m.bias.uniform_(-1, 1)
    gen = torch.Generator().manual_seed(1)
    xs = [torch.randn(s, generator=gen) for _, _, s in CASES]
    names = [n for n, _, _ in CASES]
    with torch.no_grad():
        want = [y.numpy() for y in model(*xs)]
    path = os.path.join(a.work, "nn3d.onnx")
    torch.onnx.export(model, tuple(xs), path, opset_version=13, input_names=[f"x_{n}" for n in names],
                      output_names=names)
    feeds = {f"x_{n}": x.numpy() for n, x in zip(names, xs)}
    cases = [(n, w, f"{n}  {shape}") for (n, _, shape), w in zip(CASES, want)]
    return run_and_compare(a.binary, a.work, path, feeds, cases, a.run_args, "3-D ops match PyTorch")

if __name__ == "__main__":
    sys.exit(main())
