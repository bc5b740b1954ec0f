// Typed attribute structs of the built-in operators. Defaults are the ONNX defaults.
// All axes are normalised to be non-negative by the importer (and by builders).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/attrs.h"

namespace sy::ops {

using ir::AttrsBase;
using ir::NoAttrs;

#define SY_ATTRS(Name) struct Name : AttrsBase<Name> { static constexpr const char* kName = #Name;

SY_ATTRS(AxisAttrs)
  int64_t axis = 0;
  template <class V> void fields(V& v) { v.visit("axis", axis); }
};
SY_ATTRS(AlphaAttrs)
  double alpha = 0.01;
  template <class V> void fields(V& v) { v.visit("alpha", alpha); }
};
SY_ATTRS(IsInfAttrs)
  bool detect_positive = true;
  bool detect_negative = true;
  template <class V> void fields(V& v) {
    v.visit("detect_positive", detect_positive);
    v.visit("detect_negative", detect_negative);
  }
};
SY_ATTRS(GeluAttrs)
  std::string approximate = "none";  // "none" (erf) or "tanh"
  template <class V> void fields(V& v) { v.visit("approximate", approximate); }
};
SY_ATTRS(HardSigmoidAttrs)
  double alpha = 0.2;
  double beta = 0.5;
  template <class V> void fields(V& v) { v.visit("alpha", alpha); v.visit("beta", beta); }
};
SY_ATTRS(SeluAttrs)
  double alpha = 1.67326319217681884765625;
  double gamma = 1.05070102214813232421875;
  template <class V> void fields(V& v) { v.visit("alpha", alpha); v.visit("gamma", gamma); }
};
// Clip bounds as attributes (the importer folds constant min/max inputs); +-inf means none.
SY_ATTRS(ClipAttrs)
  double min = -INFINITY;
  double max = INFINITY;
  template <class V> void fields(V& v) { v.visit("min", min); v.visit("max", max); }
};
SY_ATTRS(CastAttrs)
  DType to = DType::f32;
  template <class V> void fields(V& v) { v.visit("to", to); }
};
SY_ATTRS(ModAttrs)
  bool fmod = false;  // false: result takes the divisor's sign (Python); true: C fmod
  template <class V> void fields(V& v) { v.visit("fmod", fmod); }
};
SY_ATTRS(EpsilonAttrs)
  double epsilon = 1e-5;
  template <class V> void fields(V& v) { v.visit("epsilon", epsilon); }
};

// padding = [top, left, bottom, right]; all explicit (auto_pad resolved by the importer).
SY_ATTRS(Conv2dAttrs)
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> padding{0, 0, 0, 0};
  std::vector<int64_t> dilation{1, 1};
  int64_t groups = 1;
  template <class V> void fields(V& v) {
    v.visit("strides", strides);
    v.visit("padding", padding);
    v.visit("dilation", dilation);
    v.visit("groups", groups);
  }
};
SY_ATTRS(ConvTranspose2dAttrs)
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> padding{0, 0, 0, 0};
  std::vector<int64_t> dilation{1, 1};
  std::vector<int64_t> output_padding{0, 0};
  int64_t groups = 1;
  template <class V> void fields(V& v) {
    v.visit("strides", strides);
    v.visit("padding", padding);
    v.visit("dilation", dilation);
    v.visit("output_padding", output_padding);
    v.visit("groups", groups);
  }
};
SY_ATTRS(BatchNormAttrs)
  double epsilon = 1e-5;
  template <class V> void fields(V& v) { v.visit("epsilon", epsilon); }
};
// Normalises over axes [axis, rank); scale/bias have shape x.shape[axis:].
SY_ATTRS(LayerNormAttrs)
  int64_t axis = -1;  // normalised to non-negative by builders
  double epsilon = 1e-5;
  template <class V> void fields(V& v) { v.visit("axis", axis); v.visit("epsilon", epsilon); }
};
SY_ATTRS(LRNAttrs)
  int64_t size = 1;
  double alpha = 1e-4;
  double beta = 0.75;
  double bias = 1.0;
  template <class V> void fields(V& v) {
    v.visit("size", size); v.visit("alpha", alpha); v.visit("beta", beta); v.visit("bias", bias);
  }
};
// padding = [top, left, bottom, right]. For avg: count_include_pad; for lp: p.
SY_ATTRS(Pool2dAttrs)
  std::vector<int64_t> kernel{1, 1};
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> padding{0, 0, 0, 0};
  std::vector<int64_t> dilation{1, 1};
  bool ceil_mode = false;
  bool count_include_pad = false;
  int64_t p = 2;
  template <class V> void fields(V& v) {
    v.visit("kernel", kernel);
    v.visit("strides", strides);
    v.visit("padding", padding);
    v.visit("dilation", dilation);
    v.visit("ceil_mode", ceil_mode);
    v.visit("count_include_pad", count_include_pad);
    v.visit("p", p);
  }
};
// pads = [begin_0..begin_{n-1}, end_0..end_{n-1}] (ONNX order; may be negative = crop).
SY_ATTRS(PadAttrs)
  std::vector<int64_t> pads;
  std::string mode = "constant";  // constant | reflect | edge | wrap
  double value = 0.0;
  template <class V> void fields(V& v) { v.visit("pads", pads); v.visit("mode", mode); v.visit("value", value); }
};
SY_ATTRS(BlockSizeAttrs)
  int64_t blocksize = 1;
  template <class V> void fields(V& v) { v.visit("blocksize", blocksize); }
};
SY_ATTRS(DepthToSpaceAttrs)
  int64_t blocksize = 1;
  std::string mode = "DCR";
  template <class V> void fields(V& v) { v.visit("blocksize", blocksize); v.visit("mode", mode); }
};
// ONNX GridSample-16 (PyTorch's grid_sample): data sampled at the grid's normalized (x, y).
SY_ATTRS(GridSampleAttrs)
  std::string mode = "bilinear";      // bilinear | nearest | bicubic
  std::string padding_mode = "zeros";  // zeros | border | reflection
  bool align_corners = false;
  template <class V> void fields(V& v) {
    v.visit("mode", mode);
    v.visit("padding_mode", padding_mode);
    v.visit("align_corners", align_corners);
  }
};
// ONNX RoiAlign-10/16: each region of interest (x1, y1, x2, y2 in the image's scale) of the image
// its batch index names is pooled into output_height x output_width bins, each the average (or
// the max) of a grid of bilinear samples.
SY_ATTRS(RoiAlignAttrs)
  std::string mode = "avg";  // avg | max
  int64_t output_height = 1;
  int64_t output_width = 1;
  int64_t sampling_ratio = 0;  // samples along each side of a bin; 0: ceil(region size / bins), per region
  double spatial_scale = 1.0;  // the regions' coordinates times this are the image's
  bool half_pixel = true;      // coordinate_transformation_mode half_pixel; false: output_half_pixel
  template <class V> void fields(V& v) {
    v.visit("mode", mode);
    v.visit("output_height", output_height);
    v.visit("output_width", output_width);
    v.visit("sampling_ratio", sampling_ratio);
    v.visit("spatial_scale", spatial_scale);
    v.visit("half_pixel", half_pixel);
  }
};
// ONNX MaxRoiPool-1 (torchvision's roi_pool, Caffe's ROIPooling): each region (rows of batch index,
// x1, y1, x2, y2; rounded to whole pixels of the scaled image) split into pooled_shape bins of whole
// pixels, each the max over its pixels (0 for an empty bin).
SY_ATTRS(MaxRoiPoolAttrs)
  std::vector<int64_t> pooled_shape;  // [height, width]
  double spatial_scale = 1.0;
  template <class V> void fields(V& v) {
    v.visit("pooled_shape", pooled_shape);
    v.visit("spatial_scale", spatial_scale);
  }
};
// A region of RoiAlign may take at most this many samples (bins x samples per bin; beyond, an error:
// a coordinate of 1e30 would sample for ever), and MaxRoiPool's rounded corners lie at most this
// far from the origin (else an error), in every implementation.
inline constexpr double kRoiMaxSamples = 1 << 26;
inline constexpr double kRoiMaxCoordinate = 1e15;
// Resize of the two innermost axes of an NCHW tensor to a static size.
SY_ATTRS(Resize2dAttrs)
  std::vector<int64_t> size;                           // output [H, W]
  std::string mode = "nearest";                        // nearest | linear | cubic
  std::string coordinate_transformation_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_coeff_a = -0.75;
  // The scales ONNX's Resize was given, where they are not output / input (a 0.5 of an odd
  // size): the coordinate transformation divides by them. 0: output / input.
  double scale_h = 0.0, scale_w = 0.0;
  // Linear and cubic: the taps outside the image weigh 0, the others are renormalized to sum to
  // 1 (TensorFlow's bicubic resize through tf2onnx); otherwise they repeat the edge.
  bool exclude_outside = false;
  template <class V> void fields(V& v) {
    v.visit("size", size);
    v.visit("mode", mode);
    v.visit("coordinate_transformation_mode", coordinate_transformation_mode);
    v.visit("nearest_mode", nearest_mode);
    v.visit("cubic_coeff_a", cubic_coeff_a);
    v.visit("scale_h", scale_h);
    v.visit("scale_w", scale_w);
    v.visit("exclude_outside", exclude_outside);
  }
};

SY_ATTRS(ReshapeAttrs)
  std::vector<int64_t> newshape;  // fully resolved, no 0 or -1
  template <class V> void fields(V& v) { v.visit("newshape", newshape); }
};
SY_ATTRS(TransposeAttrs)
  std::vector<int64_t> perm;
  template <class V> void fields(V& v) { v.visit("perm", perm); }
};
SY_ATTRS(SplitAttrs)
  int64_t axis = 0;
  std::vector<int64_t> sizes;  // one per output, summing to the axis extent
  template <class V> void fields(V& v) { v.visit("axis", axis); v.visit("sizes", sizes); }
};
// One entry per input axis, already clamped/normalised by the builder: begin in [0, dim],
// end in [-1, dim], step != 0 (ONNX Slice semantics after clamping).
SY_ATTRS(StridedSliceAttrs)
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::vector<int64_t> strides;
  template <class V> void fields(V& v) { v.visit("begin", begin); v.visit("end", end); v.visit("strides", strides); }
};
SY_ATTRS(BatchDimsAttrs)
  int64_t batch_dims = 0;
  template <class V> void fields(V& v) { v.visit("batch_dims", batch_dims); }
};
SY_ATTRS(ShapeAttrs)
  std::vector<int64_t> shape;
  template <class V> void fields(V& v) { v.visit("shape", shape); }
};
SY_ATTRS(RepsAttrs)
  std::vector<int64_t> reps;
  template <class V> void fields(V& v) { v.visit("reps", reps); }
};
SY_ATTRS(TriluAttrs)
  bool upper = true;
  int64_t k = 0;
  template <class V> void fields(V& v) { v.visit("upper", upper); v.visit("k", k); }
};
SY_ATTRS(OneHotAttrs)
  int64_t depth = 0;
  int64_t axis = -1;  // normalised to non-negative (in the output's rank)
  template <class V> void fields(V& v) { v.visit("depth", depth); v.visit("axis", axis); }
};
SY_ATTRS(CumSumAttrs)
  int64_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
  template <class V> void fields(V& v) { v.visit("axis", axis); v.visit("exclusive", exclusive); v.visit("reverse", reverse); }
};
SY_ATTRS(ScatterAttrs)
  int64_t axis = 0;
  std::string reduction = "none";  // none | add | mul | max | min
  template <class V> void fields(V& v) { v.visit("axis", axis); v.visit("reduction", reduction); }
};

// Reduction over `axes` (sorted, unique, non-negative, always explicit: the importer expands
// "all axes"); an empty list reduces nothing.
SY_ATTRS(ReduceAttrs)
  std::vector<int64_t> axes;
  bool keepdims = true;
  template <class V> void fields(V& v) { v.visit("axes", axes); v.visit("keepdims", keepdims); }
};
SY_ATTRS(ArgReduceAttrs)
  int64_t axis = 0;
  bool keepdims = true;
  bool select_last_index = false;
  template <class V> void fields(V& v) {
    v.visit("axis", axis); v.visit("keepdims", keepdims); v.visit("select_last_index", select_last_index);
  }
};
SY_ATTRS(TopKAttrs)
  int64_t k = 1;
  int64_t axis = -1;  // normalised to non-negative
  bool largest = true;
  bool sorted = true;
  template <class V> void fields(V& v) {
    v.visit("k", k); v.visit("axis", axis); v.visit("largest", largest); v.visit("sorted", sorted);
  }
};

#undef SY_ATTRS

}  // namespace sy::ops
