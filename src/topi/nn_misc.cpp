// Native computes of the nn layout ops: pad (constant/reflect/edge/wrap), depth_to_space,
// space_to_depth and image.resize2d (nearest/linear/cubic, the reference's coordinate modes).
// All are injective: the default schedule (schedule_injective) applies.
#include <cmath>

#include "ops/op.h"
#include "topi/nn_util.h"

namespace sy::topi::nn {

namespace {

// Source index of output position o along an axis of extent dim padded by `before` (pad mode).
Expr pad_source(Expr o, int64_t before, int64_t dim, const std::string& mode) {
  Expr i = o - before;
  if (mode == "edge") return clamp(i, 0, dim - 1);
  if (mode == "wrap") return tir::binary(tir::ExprKind::Mod, i, idx(dim));
  // reflect: mirror without repeating the edge (numpy 'reflect').
  if (dim == 1) return idx(0);
  const int64_t period = 2 * (dim - 1);
  Expr m = tir::binary(tir::ExprKind::Mod, i, idx(period));
  return tir::select(m < dim, m, idx(period) - m);
}

std::vector<Tensor> pad(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::PadAttrs>();
  const Tensor& x = in.at(0);
  const size_t r = x.ndim();
  if (a.pads.size() != 2 * r) throw Error("nn.pad: expects " + std::to_string(2 * r) + " pads");
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge" && a.mode != "wrap")
    throw Error("nn.pad: unknown mode '" + a.mode + "'");
  const Shape& os = out_shape(c);
  for (size_t d = 0; d < r; ++d)
    if (a.mode != "constant" && x.shape()[d] == 0 && os[d] > 0)
      throw Error("nn.pad: mode '" + a.mode + "' cannot pad an empty axis");
  return {te::compute(os, [&](const std::vector<Expr>& o) -> Expr {
    std::vector<Expr> src;
    std::vector<Expr> inside;
    for (size_t d = 0; d < r; ++d) {
      const int64_t dim = x.shape()[d], before = a.pads[d];
      if (a.mode == "constant") {
        Expr i = o[d] - before;
        const size_t guards = inside.size();
        if (before > 0) inside.push_back(i >= 0);
        if (os[d] - before > dim) inside.push_back(i < dim);
        src.push_back(inside.size() > guards ? clamp(i, 0, std::max<int64_t>(dim - 1, 0)) : i);
      } else {
        src.push_back(pad_source(o[d], before, dim, a.mode));
      }
    }
    if (numel(x.shape()) == 0) return fconst(x.dtype(), a.value);
    Expr v = x(src);
    if (inside.empty()) return v;
    return tir::select(all_of(inside), v, fconst(x.dtype(), a.value));
  }, "pad")};
}

std::vector<Tensor> depth_to_space(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::DepthToSpaceAttrs>();
  const Tensor& x = in.at(0);
  const int64_t b = a.blocksize, C = x.shape()[1];
  const int64_t cout = C / (b * b);
  if (a.mode != "DCR" && a.mode != "CRD") throw Error("nn.depth_to_space: unknown mode '" + a.mode + "'");
  const bool dcr = a.mode == "DCR";
  return {te::compute(out_shape(c), [&](Expr n, Expr ch, Expr y, Expr xx) {
    Expr i = y % b, j = xx % b;
    Expr src = dcr ? (i * b + j) * cout + ch : ch * (b * b) + i * b + j;
    return x(n, src, y / b, xx / b);
  }, "depth_to_space")};
}

std::vector<Tensor> space_to_depth(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::BlockSizeAttrs>();
  const Tensor& x = in.at(0);
  const int64_t b = a.blocksize, C = x.shape()[1];
  return {te::compute(out_shape(c), [&](Expr n, Expr oc, Expr h, Expr w) {
    Expr ch = oc % C, ij = oc / C;
    return x(n, ch, h * b + ij / b, w * b + ij % b);
  }, "space_to_depth")};
}

// ---- resize2d: the reference's per-axis taps, written as f64 index arithmetic ----

Expr source_coordinate(Expr o, int64_t in_len, int64_t out_len, const std::string& mode, double given_scale) {
  Expr x = f64(o);
  const double scale = given_scale > 0 ? given_scale : static_cast<double>(out_len) / static_cast<double>(in_len);
  if (mode == "half_pixel") return (x + 0.5) / dconst(scale) - 0.5;
  if (mode == "pytorch_half_pixel") return out_len > 1 ? (x + 0.5) / dconst(scale) - 0.5 : dconst(0.0);
  if (mode == "align_corners")
    return out_len == 1 ? dconst(0.0)
                        : x * dconst(static_cast<double>(in_len - 1)) / dconst(static_cast<double>(out_len - 1));
  if (mode == "asymmetric") return x / dconst(scale);
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / dconst(scale);
  throw Error("image.resize2d: unsupported coordinate_transformation_mode '" + mode + "'");
}

struct AxisTaps {
  std::vector<Expr> idx, w;  // index (i64) and weight (f64) per tap
};

AxisTaps axis_taps(const ops::Resize2dAttrs& a, Expr o, int64_t in_len, int64_t out_len, double given_scale) {
  // PyTorch's nearest upsampling by a whole factor k (asymmetric, floor): floor(o / k) in f64 is
  // o / k exactly (k is exact in f64, and a quotient that is not whole is at least 1/k from the
  // next integer). An integer index lets the kernel inline the resize into its consumer; the
  // f64 floor is a math call, which made schedule_injective compute the resized map whole
  // first (YOLO's 2x upsampling before a concatenation: a 256 KB buffer and a copy).
  if (a.mode == "nearest" && a.nearest_mode == "floor" && a.coordinate_transformation_mode == "asymmetric" &&
      out_len % in_len == 0 && given_scale == 0) {
    AxisTaps t;
    t.idx = {out_len == in_len ? o : o / (out_len / in_len)};
    t.w = {dconst(1.0)};
    return t;
  }
  Expr x = source_coordinate(o, in_len, out_len, a.coordinate_transformation_mode, given_scale);
  Expr fl = dcall("floor", x);
  Expr r = x - fl;
  Expr i0 = tir::cast(DType::i64, fl);
  AxisTaps t;
  auto cl = [&](Expr i) { return clamp(i, 0, in_len - 1); };
  if (a.mode == "nearest") {
    const std::string& nm = a.nearest_mode;
    Expr i;
    if (nm == "round_prefer_floor") i = tir::select(r <= 0.5, i0, i0 + 1);
    else if (nm == "round_prefer_ceil") i = tir::select(r < 0.5, i0, i0 + 1);
    else if (nm == "floor") i = i0;
    else if (nm == "ceil") i = tir::select(tir::ne(r, dconst(0.0)), i0 + 1, i0);
    else throw Error("image.resize2d: unknown nearest_mode '" + nm + "'");
    t.idx = {cl(i)};
    t.w = {dconst(1.0)};
  } else if (a.mode == "linear") {
    t.idx = {cl(i0), cl(i0 + 1)};
    t.w = {1.0 - r, r};
  } else if (a.mode == "cubic") {
    const double A = a.cubic_coeff_a;
    Expr s = 1.0 - r;
    Expr r1 = r + 1.0, s1 = s + 1.0;
    t.w = {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, (((A + 2) * r - (A + 3)) * r) * r + 1.0,
           (((A + 2) * s - (A + 3)) * s) * s + 1.0, ((A * s1 - 5 * A) * s1 + 8 * A) * s1 - 4 * A};
    for (int k = 0; k < 4; ++k) t.idx.push_back(cl(i0 - 1 + k));
  } else {
    throw Error("image.resize2d: unknown mode '" + a.mode + "' (expected nearest, linear or cubic)");
  }
  if (a.exclude_outside && t.w.size() > 1) {
    // The reference's renormalization: tap k reads i0 + k (linear) or i0 - 1 + k (cubic).
    const int64_t first = t.w.size() == 2 ? 0 : -1;
    Expr sum;
    for (size_t k = 0; k < t.w.size(); ++k) {
      Expr raw = i0 + (first + static_cast<int64_t>(k));
      t.w[k] = tir::select(tir::logical_and(raw >= idx(0), raw < idx(in_len)), t.w[k], dconst(0.0));
      sum = sum ? sum + t.w[k] : dconst(0.0) + t.w[k];
    }
    for (Expr& w : t.w) w = w / sum;
  }
  return t;
}

std::vector<Tensor> resize2d(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::Resize2dAttrs>();
  const Tensor& x = in.at(0);
  const Shape& os = out_shape(c);
  const size_t r = x.ndim();
  const int64_t H = x.shape()[r - 2], W = x.shape()[r - 1], OH = os[r - 2], OW = os[r - 1];
  if (numel(os) > 0 && (H == 0 || W == 0)) throw Error("image.resize2d: cannot resize an empty image");
  if (a.mode != "nearest" && !is_float_dtype(x.dtype()))
    throw Error("image.resize2d: " + a.mode + " mode needs float data");
  auto at = [&](const Tensor& t, const std::vector<Expr>& o, Expr h, Expr w) {
    std::vector<Expr> i(o.begin(), o.end() - 2);
    i.push_back(h);
    i.push_back(w);
    return t(i);
  };
  if (a.mode == "nearest")
    return {te::compute(os, [&](const std::vector<Expr>& o) -> Expr {
      return at(x, o, axis_taps(a, o[r - 2], H, OH, a.scale_h).idx[0], axis_taps(a, o[r - 1], W, OW, a.scale_w).idx[0]);
    }, "resize2d")};
  // Separable, as the reference sums (each of a window's rows along the width, then the rows):
  // every input row resized along the width first (f64, the reference's precision), then each
  // output row mixes two or four of those rows with contiguous reads. Computed per output
  // element, a 14x14 -> 224x224 linear upsampling (DeepLabV3's logits, 21 channels) took 2.7 ms
  // on 2 threads: the width's source coordinate, its floor and four gathers per element. Where
  // the width pass is smaller than half the output, schedule_injective computes it once at the
  // root; otherwise (shrinking) it is inlined and the kernel is the per-element one again.
  Shape rows_shape = os;
  rows_shape[r - 2] = H;
  Tensor rows = te::compute(rows_shape, [&](const std::vector<Expr>& o) -> Expr {
    AxisTaps tw = axis_taps(a, o[r - 1], W, OW, a.scale_w);
    Expr row;
    for (size_t j = 0; j < tw.idx.size(); ++j) {
      Expr term = tw.w[j] * f64(at(x, o, o[r - 2], tw.idx[j]));
      row = row ? row + term : dconst(0.0) + term;
    }
    return row;
  }, "resize2d_width");
  return {te::compute(os, [&](const std::vector<Expr>& o) -> Expr {
    AxisTaps th = axis_taps(a, o[r - 2], H, OH, a.scale_h);
    Expr acc;
    for (size_t i = 0; i < th.idx.size(); ++i) {
      Expr term = th.w[i] * at(rows, o, th.idx[i], o[r - 1]);
      acc = acc ? acc + term : dconst(0.0) + term;
    }
    return tir::cast(x.dtype(), acc);
  }, "resize2d")};
}

}  // namespace

void register_misc(Registry& r) {
  r.add(ops::OpCode::Pad, pad, nullptr);
  r.add(ops::OpCode::DepthToSpace, depth_to_space, nullptr);
  r.add(ops::OpCode::SpaceToDepth, space_to_depth, nullptr);
  r.add(ops::OpCode::Resize2d, resize2d, nullptr);
}

}  // namespace sy::topi::nn
