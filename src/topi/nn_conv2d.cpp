// Native computes and schedules of nn.conv2d and nn.conv2d_transpose.
//
// conv2d, groups == 1 (the performance path, as TVM's x86 NCHW[x]c conv): the weight is packed
// to [ceil(O/B)][C][KH][KW][B], B = one vector of the target (a stage of the kernel, or given
// pre-packed as a 5-d parameter; see prepack_constants in topi.h), the convolution is computed in
// a blocked layout conv2d_nchwc[N][O/B][OH][OW][B] one register tile at a time (tile_oc output
// channels x a block of output pixels, accumulated over input channels and taps in vectors; the
// tile is sized from the target's vector register count), and each
// tile is written out in NCHW through the group's epilogue (bias, residual add, relu, clip, ...).
// Pointwise (1x1, stride 1, unpadded) convs with few input channels are a GEMM over the flattened
// plane: vectors along the pixels (contiguous in NCHW for input and output), the weight read as
// scalars, so nothing is written back from a blocked tile (MobileNet's expansion convs).
// Short reductions over wide rows (C*KH*KW <= 48, e.g. MobileNet's stem) vectorize along the
// output row instead; depthwise convs (groups == channels) and other grouped convs along the
// flattened padded plane (whole vectors whatever the width), or the output row; grouped convs
// whose groups have whole vectors of output channels in the blocked layout, as groups == 1.
#include <algorithm>

#include "ir/visitor.h"
#include "ops/op.h"
#include "tir/functor.h"
#include "topi/nn_util.h"

namespace sy::topi::nn {

namespace {

// Convs with at most this many products per output, at least this output width and unit width
// stride vectorize along the output rows instead of over output channels.
constexpr int64_t kPixelPathMaxReduction = 48;
constexpr int64_t kPixelPathMinWidth = 48;
constexpr int64_t kPixelPathMaxStride = 2;  // strided rows load with permutes, still cheaper than write-back
// Pointwise convs with at most this many input channels take the flattened-plane path, except
// on planes of at most kSmallPlanePixels (14x14) from kSmallPlaneBlockedChannels channels on:
// there the plane is too short to chunk and the blocked path was faster on both ISA families
// (sy_nn_bench, 1 thread: 256->1024 14x14 AVX-512 99% of SGEMM against 82%, AVX2 79% against
// 55%; DenseNet's 288->128 14x14 100% against 89%, AVX2 89% against 60%; 320->1280 7x7 87%
// against 66%), where below 256 channels (MobileNetV2's 96->576 14x14, EfficientNet's 160->960
// 7x7) the flat path stays ahead.
constexpr int64_t kFlatPathMaxChannels = 320;
constexpr int64_t kSmallPlanePixels = 14 * 14;
constexpr int64_t kSmallPlaneBlockedChannels = 256;

struct ConvGeom {
  int64_t N, C, H, W, O, Cg, KH, KW, OH, OW, G, sh, sw, pt, pl, pb, pr, dh, dw;
};

ConvGeom conv_geom(const ir::CallNode& c, const Tensor& x, const Tensor& w, const std::vector<int64_t>& strides,
                   const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
  if (strides.size() != 2 || padding.size() != 4 || dilation.size() != 2)
    throw Error(ops::op_name(c.op) + ": expects 2 strides, 4 paddings and 2 dilations");
  if (x.ndim() != 4) throw Error(ops::op_name(c.op) + ": expects NCHW data");
  const Shape& os = out_shape(c);
  ConvGeom g{};
  g.N = x.shape()[0]; g.C = x.shape()[1]; g.H = x.shape()[2]; g.W = x.shape()[3];
  g.O = os[1]; g.OH = os[2]; g.OW = os[3];
  g.Cg = w.shape()[1]; g.KH = w.shape()[2]; g.KW = w.shape()[3];
  g.G = groups;
  g.sh = strides[0]; g.sw = strides[1];
  g.pt = padding[0]; g.pl = padding[1]; g.pb = padding[2]; g.pr = padding[3];
  g.dh = dilation[0]; g.dw = dilation[1];
  return g;
}

// x padded so that every window read is in bounds (only the rows/columns the windows reach).
Tensor pad_input(const Tensor& x, int64_t Hp, int64_t Wp, int64_t pt, int64_t pl) {
  const int64_t H = x.shape()[2], W = x.shape()[3];
  if (pt == 0 && pl == 0 && Hp <= H && Wp <= W) return x;
  return te::compute({x.shape()[0], x.shape()[1], Hp, Wp}, [&](Expr n, Expr c, Expr h, Expr w) {
    Expr ih = h - pt, iw = w - pl;
    Expr inside = all_of({ih >= 0, ih < H, iw >= 0, iw < W});
    return tir::select(inside, x(n, c, clamp(ih, 0, H - 1), clamp(iw, 0, W - 1)), fconst(x.dtype(), 0.0));
  }, "conv2d_pad");
}

// x padded and split by the strides' phases: P[n][c][rp][cp][i][j] = x[n][c][i * sh + rp - pt]
// [j * sw + cp - pl] (zero outside), Hq x Wq per phase: the rows and columns the taps reach. Tap (rh, rw) of output (oh, ow) is then
// P[..][rh * dh % sh][rw * dw % sw][oh + rh * dh / sh][ow + rw * dw / sw]: unit stride along the
// output row whatever the conv's stride, so a row of outputs reads whole vectors (read with a
// stride in the loop over the taps, GCC builds each vector from 128-bit shuffles and spills).
// extra_rows more rows of zeros below (reads past the last row of a grid rounded up to vectors).
Tensor pad_phases(const Tensor& x, const ConvGeom& g, int64_t extra_rows = 0) {
  const int64_t Hq = g.OH + (g.KH - 1) * g.dh / g.sh + extra_rows, Wq = g.OW + (g.KW - 1) * g.dw / g.sw;
  return te::compute({g.N, g.C, g.sh, g.sw, Hq, Wq}, [&](const std::vector<Expr>& i) {
    Expr xh = i[4] * g.sh + i[2] - g.pt, xw = i[5] * g.sw + i[3] - g.pl;
    Expr inside = all_of({xh >= 0, xh < g.H, xw >= 0, xw < g.W});
    return tir::select(inside, x(i[0], i[1], clamp(xh, 0, g.H - 1), clamp(xw, 0, g.W - 1)), fconst(x.dtype(), 0.0));
  }, "conv2d_pad");
}
// The read of tap (th, tw) = (rh * dh, rw * dw) at output (row, col) of pad_phases' result.
Expr phase_read(const Tensor& P, const ConvGeom& g, Expr n, Expr c, Expr th, Expr tw, Expr row, Expr col) {
  return P({n, c, th % g.sh, tw % g.sw, row + th / g.sh, col + tw / g.sw});
}

// The implementations of conv2d (each its own strategy entry; see register_conv for when each
// applies and which is preferred).
enum class Variant { Flat, Rows, Blocked, GroupedBlocked, Depthwise, DepthwisePlane, GroupedPlane, Direct };

std::vector<Tensor> conv2d(Variant v, const ir::CallNode& c, const std::vector<Tensor>& in,
                           const target::Target& target) {
  const auto& a = c.attrs_as<ops::Conv2dAttrs>();
  const Tensor& x = in.at(0);
  const Tensor& w = in.at(1);
  require_float(c, x);
  const bool prepacked = w.ndim() == 5;
  const int64_t kBlock = prepacked ? w.shape()[4] : weight_block(target);
  ConvGeom g = conv_geom(c, x, w, a.strides, a.padding, a.dilation, a.groups);
  const bool has_bias = in.size() > 2;
  const DType t = x.dtype();
  const int64_t Hp = (g.OH - 1) * g.sh + (g.KH - 1) * g.dh + 1, Wp = (g.OW - 1) * g.sw + (g.KW - 1) * g.dw + 1;
  auto ih = [&](Expr oh, Expr rh) { return oh * g.sh + rh * g.dh; };
  auto iw = [&](Expr ow, Expr rw) { return ow * g.sw + rw * g.dw; };
  auto with_bias = [&](Expr v, Expr o) { return has_bias ? v + in[2](o) : v; };
  // Weight element [o][rc][rh][rw], plain or pre-packed ([o / B][rc][rh][rw][o % B]).
  auto weight = [&](Expr o, auto rc, auto rh, auto rw) {  // rc, rh, rw: an Expr or a constant index
    return prepacked ? w(o / kBlock, rc, rh, rw, o % kBlock) : w(o, rc, rh, rw);
  };
  if (v == Variant::Flat) {
    // out[n][o][p] = sum_c w[o][c] * x[n][c][p] over the flattened plane p = oh * OW + ow (the
    // index p / OW * W + p % OW of x folds back to p).
    IterVar rc = te::reduce_axis(g.C, "rc");
    auto wv = [&](Expr o) { return weight(o, rc.var, 0, 0); };
    Tensor Y = te::compute({g.N, g.O, g.OH * g.OW}, [&](Expr n, Expr o, Expr p) {
      return te::sum(x(n, rc.var, p / g.OW, p % g.OW) * wv(o), {rc});
    }, "conv2d_flat");
    return {te::compute({g.N, g.O, g.OH, g.OW}, [&](Expr n, Expr o, Expr oh, Expr ow) {
      return with_bias(Y(n, o, oh * g.OW + ow), o);
    }, "conv2d")};
  }
  if (v == Variant::DepthwisePlane) {
    // Depthwise over the flattened plane: output q = oh * Wq + ow of a grid Wq >= OW wide, so that
    // every tap reads one run of vectors over the plane whatever the width (instead of one short
    // 7, 14 or 28-lane row at a time). The padded input is stored split by the strides' phases,
    // P[n][c][rp][cp][i][j] = x[n][c][i * sh + rp - pt][j * sw + cp - pl] (zero outside; one
    // plane Hq x Wq when the strides are 1), so tap (rh, rw) of output q reads plane
    // (rh * dh % sh, rw * dw % sw) at q + (rh * dh / sh) * Wq + rw * dw / sw: linear in q for any
    // stride. The grid's columns ow >= OW are computed and never written.
    Tensor Pp = pad_phases(x, g);
    const int64_t Wq = Pp.shape()[5];
    IterVar rh = te::reduce_axis(g.KH, "rh"), rw = te::reduce_axis(g.KW, "rw");
    Tensor Y = te::compute({g.N, g.O, (g.OH - 1) * Wq + g.OW}, [&](Expr n, Expr o, Expr q) {
      // The read at flat index q + (th / sh) * Wq + tw / sw of its phase, as (row, column).
      Expr th = rh.var * g.dh, tw = rw.var * g.dw;
      Expr i = q + th / g.sh * Wq + tw / g.sw;
      return te::sum(Pp({n, o, th % g.sh, tw % g.sw, i / Wq, i % Wq}) * weight(o, 0, rh.var, rw.var), {rh, rw});
    }, "conv2d_depthwise_plane");
    return {te::compute({g.N, g.O, g.OH, g.OW}, [&](Expr n, Expr o, Expr oh, Expr ow) {
      return with_bias(Y(n, o, oh * Wq + ow), o);
    }, "conv2d")};
  }
  if (v == Variant::GroupedPlane) {
    // A grouped conv over the flattened plane, as DepthwisePlane, summed over the group's input
    // channels: a register tile of the group's output channels reads each tap's run of vectors
    // once for all of them. The grid is rounded up to whole vectors (the padded input has the
    // rows of zeros its last vector reads), so that a tile of vectors divides it: ResNeXt's 14x14
    // and 7x7 rows read as 14 and 7-lane vectors one row at a time (conv2d.rows) ran at 8-13% of
    // SGEMM.
    const int64_t L = target.vector_lanes();
    const int64_t Wq0 = g.OW + (g.KW - 1) * g.dw / g.sw;
    // Vectors: rounded up to a multiple of 6, 4, 3 or 2 where that costs at most 1/16 more, so
    // that register tiles of several vectors divide them (ResNeXt's 56x56 grid: 203 = 7 x 29
    // vectors, 204 with 6).
    int64_t nvec = ((g.OH - 1) * Wq0 + g.OW + L - 1) / L;
    for (int64_t m : {6, 4, 3, 2})
      if ((nvec + m - 1) / m * m - nvec <= nvec / 16) {
        nvec = (nvec + m - 1) / m * m;
        break;
      }
    const int64_t Q = nvec * L;
    const int64_t reach = Q - 1 + (g.KH - 1) * g.dh / g.sh * Wq0 + (g.KW - 1) * g.dw / g.sw;  // last flat index read
    const int64_t Hq0 = g.OH + (g.KH - 1) * g.dh / g.sh;
    Tensor Pp = pad_phases(x, g, std::max<int64_t>(0, reach / Wq0 + 1 - Hq0));
    const int64_t Wq = Pp.shape()[5], Og = g.O / g.G;
    IterVar rc = te::reduce_axis(g.Cg, "rc"), rh = te::reduce_axis(g.KH, "rh"), rw = te::reduce_axis(g.KW, "rw");
    Tensor Y = te::compute({g.N, g.O, Q}, [&](Expr n, Expr o, Expr q) {
      Expr th = rh.var * g.dh, tw = rw.var * g.dw;
      Expr i = q + th / g.sh * Wq + tw / g.sw;
      return te::sum(Pp({n, (o / Og) * g.Cg + rc.var, th % g.sh, tw % g.sw, i / Wq, i % Wq}) * weight(o, rc.var, rh.var, rw.var),
                     {rc, rh, rw});
    }, "conv2d_grouped_plane");
    return {te::compute({g.N, g.O, g.OH, g.OW}, [&](Expr n, Expr o, Expr oh, Expr ow) {
      return with_bias(Y(n, o, oh * Wq + ow), o);
    }, "conv2d")};
  }
  if (v == Variant::Rows) {
    // Vectors along the output row, the weight read as scalars; no blocked layout to write back
    // from (fast for a short reduction over a wide plane: MobileNet's stem; and grouped convs,
    // whose groups of 4-32 channels are too narrow for channel vectors). The input is split by
    // the strides' phases, so that the row's reads are whole vectors.
    IterVar rc = te::reduce_axis(g.Cg, "rc"), rh = te::reduce_axis(g.KH, "rh"), rw = te::reduce_axis(g.KW, "rw");
    auto wv = [&](Expr o) { return weight(o, rc.var, rh.var, rw.var); };
    const int64_t Og = g.O / g.G;
    auto channel = [&](Expr o) { return g.G == 1 ? rc.var : (o / Og) * g.Cg + rc.var; };
    Tensor Pp = pad_phases(x, g);
    Tensor Y = te::compute({g.N, g.O, g.OH, g.OW}, [&](Expr n, Expr o, Expr oh, Expr ow) {
      return te::sum(phase_read(Pp, g, n, channel(o), rh.var * g.dh, rw.var * g.dw, oh, ow) * wv(o), {rc, rh, rw});
    }, "conv2d_rows");
    return {te::compute(Y.shape(), [&](Expr n, Expr o, Expr oh, Expr ow) { return with_bias(Y(n, o, oh, ow), o); },
                        "conv2d")};
  }
  Tensor P = pad_input(x, Hp, Wp, g.pt, g.pl);
  if (v == Variant::Blocked || v == Variant::GroupedBlocked) {
    // Grouped (grouped_blocked): the groups have whole vectors of output channels (O / G a
    // multiple of B), so each block of B outputs sums over its own group's Cg input channels
    // (RegNetX's 16-channel groups on AVX-512; over the flattened plane they ran at 45-60% of
    // SGEMM on 7x7 and 14x14 maps, whose rows are not whole vectors). Cg == C when G == 1.
    const int64_t Oo = (g.O + kBlock - 1) / kBlock, Og = g.O / g.G;
    if (g.G != 1 && (g.G < 1 || g.O % g.G != 0 || Og % kBlock != 0))
      throw Error("nn.conv2d: grouped_blocked needs whole vectors of output channels per group");
    Tensor Wp = w;
    if (!prepacked) {
      Wp = te::compute({Oo, g.Cg, g.KH, g.KW, kBlock}, [&](const std::vector<Expr>& i) -> Expr {
        Expr o = i[0] * kBlock + i[4];
        if (g.O % kBlock == 0) return w(o, i[1], i[2], i[3]);
        return tir::select(o < g.O, w(tir::min(o, idx(g.O - 1)), i[1], i[2], i[3]), fconst(t, 0.0));
      }, "conv2d_wpack");
    }
    IterVar rc = te::reduce_axis(g.Cg, "rc"), rh = te::reduce_axis(g.KH, "rh"), rw = te::reduce_axis(g.KW, "rw");
    Tensor Yc = te::compute({g.N, Oo, g.OH, g.OW, kBlock}, [&](const std::vector<Expr>& i) {
      Expr ch = g.G == 1 ? rc.var : (i[1] * kBlock / Og) * g.Cg + rc.var;
      return te::sum(P(i[0], ch, ih(i[2], rh.var), iw(i[3], rw.var)) * Wp(i[1], rc.var, rh.var, rw.var, i[4]),
                     {rc, rh, rw});
    }, "conv2d_nchwc");
    return {te::compute({g.N, g.O, g.OH, g.OW}, [&](Expr n, Expr o, Expr oh, Expr ow) {
      return with_bias(Yc(n, o / kBlock, oh, ow, o % kBlock), o);
    }, "conv2d")};
  }
  const int64_t Og = g.O / g.G;
  IterVar rc = te::reduce_axis(g.Cg, "rc"), rh = te::reduce_axis(g.KH, "rh"), rw = te::reduce_axis(g.KW, "rw");
  const bool depthwise = v == Variant::Depthwise;
  Tensor Y = te::compute({g.N, g.O, g.OH, g.OW}, [&](Expr n, Expr o, Expr oh, Expr ow) {
    Expr ch = g.G == 1 ? rc.var : (depthwise ? o : (o / Og) * g.Cg + rc.var);
    return te::sum(P(n, ch, ih(oh, rh.var), iw(ow, rw.var)) * weight(o, rc.var, rh.var, rw.var), {rc, rh, rw});
  }, depthwise ? "conv2d_depthwise" : "conv2d_direct");
  return {te::compute(Y.shape(), [&](Expr n, Expr o, Expr oh, Expr ow) { return with_bias(Y(n, o, oh, ow), o); },
                      "conv2d")};
}

// Register tile of the blocked conv: output pixels along the width (and rows when it is short).
void pixel_tile(int64_t OH, int64_t OW, int64_t target, int64_t& th, int64_t& tw) {
  if (OW <= target) {
    tw = OW;
  } else {
    tw = target;
    for (int64_t d = target; d >= (target + 1) / 2; --d)
      if (OW % d == 0) { tw = d; break; }
  }
  th = std::max<int64_t>(1, std::min<int64_t>(OH, target / tw));
}

// The conv's stages up to `result`: the group's output, or where the output spreads the conv's
// result over more elements, the last stage of the anchor's shape (see schedule_conv2d). False
// where the group takes the injective schedule instead.
bool schedule_conv2d_stages(GroupSchedule& g, const Tensor& result) {
  te::Schedule& s = *g.sch;
  const Tensor& anchor = g.anchor_outputs.at(0);
  const bool spread = result.op() != g.outputs.at(0).op();
  te::Operation yc = find_stage(anchor, "conv2d_nchwc"), pad = find_stage(anchor, "conv2d_pad"),
                wpack = find_stage(anchor, "conv2d_wpack"), dw = find_stage(anchor, "conv2d_depthwise"),
                rows = find_stage(anchor, "conv2d_rows"), flat = find_stage(anchor, "conv2d_flat"),
                plane = find_stage(anchor, "conv2d_depthwise_plane"), gplane = find_stage(anchor, "conv2d_grouped_plane");
  // The result kept channel-blocked (blocked_layouts): the output stage is the blocked store.
  const bool stored = !spread && g.outputs.size() == 1 && g.outputs[0].name() == kBlockedStoreStage;
  if (stored && !yc) return false;
  const bool simple = spread || stored || (g.outputs.size() == 1 && g.outputs[0].shape() == anchor.shape());
  // An epilogue that calls math functions (SiLU's exp): GCC vectorizes those calls only in loops
  // it vectorizes (libmvec), else it calls expf once per element.
  bool epilogue_calls = false;
  for (te::Stage* st : s.stages()) {
    const te::Operation& op = st->op();
    if (!op->body || op == anchor.op() || op == yc || op == pad || op == wpack || op == dw || op == rows ||
        op == flat || op == plane || op == gplane || (spread && op->shape != anchor.shape()))
      continue;
    tir::visit_expr(op->body, [&](const Expr& e) { epilogue_calls |= e->kind == tir::ExprKind::Call; });
  }
  // Depthwise over the plane with such an epilogue on rows that are not whole vectors (7x7,
  // 14x14): the anchor stage stays, a compact copy of the plane the epilogue then reads in whole
  // vectors.
  const bool heavy_epilogue = plane && simple && result.op() != anchor.op() &&
                              anchor.shape()[3] % g.vector_lanes != 0 && epilogue_calls;
  const te::Operation kept_anchor = heavy_epilogue ? anchor.op() : te::Operation{};
  if (!simple || (!yc && !dw && !rows && !flat && !plane && !gplane) ||
      !inline_all_but(g, {yc, pad, wpack, dw, rows, flat, plane, gplane, kept_anchor,
                          spread ? result.op() : te::Operation{}}))
    return false;
  te::Stage& out = s[result];
  const Shape& os = anchor.shape();
  const int64_t N = os[0], O = os[1], OH = os[2], OW = os[3];
  te::Knobs local;
  te::Knobs& knobs = g.knobs ? *g.knobs : local;
  // The padded copy, computed whole before the conv. Its threads split the rows where the conv's
  // do (the blocked path with row blocks outside): each thread then pads the rows it reads.
  // Its rows in whole vectors.
  auto vectorize_pad = [&](te::Stage& p) {
    if (pad->shape.back() >= g.vector_lanes) {
      auto [wo, wi] = p.split(p.leaves().back(), g.vector_lanes);
      p.vectorize(wi);
    }
  };
  auto schedule_pad = [&](bool by_rows) {
    te::Stage& p = *s.find(pad.get());
    // Rows too in the parallel axis: a stem has 3 channels, which split 2:1 over two threads.
    te::Axis nch = by_rows ? rows_parallel(p) : fuse_leading(p, pad->shape.size() - 1);
    p.parallel(nch);
    vectorize_pad(p);
  };
  if (pad && !dw && !plane && !yc) schedule_pad(false);
  const int64_t R = g.vector_registers;
  // Vectors per row of a register tile with `rows` rows whose weights are broadcast scalars (the
  // flat and row paths): rows x vectors accumulators, one input vector per column, one broadcast.
  auto fit_for = [&](int64_t rows) { return std::max<int64_t>(1, (R - 1) / (rows + 1)); };
  if (flat) {
    // Register tile: tile_o output channels x vectors of pixels of the flattened plane; the
    // accumulators, one pixel vector per column and the broadcast weight fit the registers.
    // Default rows: 6, or 8 where the registers hold as many accumulators with 8 and the channel
    // blocks then split more evenly over the target's cores (O = 16: blocks 6+6+4 run 2:1 on two
    // threads, 8+8 run 1:1).
    auto per_thread = [&](int64_t rows) {
      const int64_t blocks = (O + rows - 1) / rows, T = std::max(1, g.target->cores);
      return (blocks + T - 1) / T * std::min<int64_t>(rows, O);
    };
    const bool eight = 8 * fit_for(8) >= 6 * fit_for(6) && per_thread(8) < per_thread(6);
    const int64_t to = std::min<int64_t>(O, knobs.define("tile_o_flat", eight ? std::vector<int64_t>{8, 6, 4}
                                                                              : std::vector<int64_t>{6, 4, 8}));
    const int64_t HW = OH * OW;
    const int64_t nv = (HW + g.vector_lanes - 1) / g.vector_lanes;
    const int64_t fit = fit_for(to);
    const int64_t C = flat->reduce_axes().at(0).extent;
    // A plane too big for the cache blocking below is only blocked when whole tiles divide it. So
    // there the default is the widest tile that does, down to 2 vectors: on a 56x56 plane of 256
    // channels (ResNet-50), 8x2 tiles read in L2-sized chunks ran 1.3-1.6x faster than 8x3 tiles
    // that re-read the whole 3 MB plane once per block of channels (and scaled worse on 2 cores,
    // which then share the memory bandwidth).
    const bool plane_spills = C * HW * 4 > g.target->l2_bytes / 2;
    int64_t fit0 = fit;
    if (plane_spills && HW % (fit * g.vector_lanes) != 0)
      for (int64_t v = fit - 1; v >= 2; --v)
        if (HW % (v * g.vector_lanes) == 0) {
          fit0 = v;
          break;
        }
    const int64_t max_vectors = knobs.define("tile_vectors_flat", distinct({fit0, fit, fit - 1, fit - 2}));
    const int64_t chunks = (nv + max_vectors - 1) / max_vectors;
    const int64_t tw = std::min(HW, (nv + chunks - 1) / chunks * g.vector_lanes);
    te::Axis n = out.leaves()[0], o = out.leaves()[1];
    te::Axis p = out.fuse(out.leaves()[2], out.leaves()[3]);
    auto [ob, oi] = out.split(o, to);
    auto [pb, pi] = out.split(p, tw);
    // Cache blocking: every block of output channels reads the whole input plane (C x HW). When
    // that is more than half the target's L2, the plane is taken in chunks of pixel tiles that
    // fit, each chunk read once for all channel blocks. Only when the tiles divide the plane: the
    // chunk index joins the parallel axis, where a tail tile would be a guard on every iteration.
    const int64_t tiles = (HW + tw - 1) / tw;
    const int64_t want = std::max<int64_t>(1, g.target->l2_bytes / 2 / (C * tw * 4));
    const int64_t chunk0 = HW % tw == 0 && want < tiles ? largest_divisor(tiles, want) : tiles;
    // Tuning may take another chunk: none (the whole plane), or half of the default's.
    const int64_t per_chunk =
        HW % tw == 0 ? knobs.define("chunk_tiles", distinct({chunk0, tiles, largest_divisor(tiles, std::max<int64_t>(1, chunk0 / 2))}))
                     : tiles;
    te::Axis par;
    if (per_chunk < tiles && per_chunk > 1) {
      auto [pc, pt] = out.split(pb, per_chunk);
      out.reorder({n, pc, ob, pt, oi, pi});
      par = out.fuse(out.fuse(n, pc), ob);
      pb = pt;
    } else {
      // The threads split the blocks of output channels (each thread reads the whole input) or
      // the plane's pixel tiles (each reads its part of the input and all the weights). The
      // input was written by the threads of the kernel before, so a thread that reads all of it
      // takes half from the other core's cache: that pays when its channel blocks do a lot of
      // work per input element, not when they are one or two register tiles. MobileNetV2's
      // projections (144 or 192 -> 32 channels, 28x28, after a depthwise conv split by
      // channels) took 1.1-1.6x longer on 2 threads than by pixels; DenseNet's 1x1 convs to 128
      // channels were faster by channel blocks. By pixels only when the whole tiles split evenly
      // (the tail tile, peeled by loop partitioning, runs on one thread).
      const int64_t T = std::max(1, g.target->cores), whole = HW / tw;
      const bool few_blocks = (O + to * T - 1) / (to * T) <= 2, even = whole % T == 0 || whole >= 4 * T;
      const bool by_pixels =
          knobs.define("pixels_parallel", T > 1 && few_blocks && even ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1}) == 1;
      if (by_pixels) {
        out.reorder({n, pb, ob, oi, pi});
        par = out.fuse(n, pb);
        pb = ob;  // the register tile's loop, where the accumulators go
      } else {
        out.reorder({n, ob, pb, oi, pi});
        // pb stays a serial loop: fused into the parallel axis, the plane's tail piece would
        // become a guard on every iteration instead of one peeled loop.
        par = out.fuse(n, ob);
      }
    }
    out.parallel(par);
    if (tw >= g.vector_lanes) {
      auto [pio, pii] = out.split(pi, g.vector_lanes);
      out.vectorize(pii);
    } else {
      out.vectorize(pi);
    }
    te::Stage& y = *s.find(flat.get());
    y.compute_at(out, pb);
    auto [yo, yi] = y.split(y.axis(2), g.vector_lanes);
    y.reorder({y.reduce_axis(0), y.axis(1), yo, yi});
    y.unroll(y.axis(1));
    y.unroll(yo);
    y.vectorize(yi);
    return true;
  }
  if (gplane) {
    // Per block of tile_o output channels of one group (in parallel): the flattened plane of the
    // block in register tiles of tile_o channels x tile_vectors vectors (a divisor of the grid's
    // vectors), over the group's input channels and the taps; then its rows written out through
    // the epilogue. Default: the tile with the most accumulators that leave registers for the
    // tile's input vectors and the broadcast weight, then the most channels (fewer loads per FMA).
    const int64_t L = g.vector_lanes,
                  Og = O / std::max<int64_t>(1, g.anchor ? g.anchor->attrs_as<ops::Conv2dAttrs>().groups : 1);
    const int64_t nvec = gplane->shape[2] / L;
    int64_t to0 = 1, nv0 = 1;
    for (int64_t to = 1; to <= std::min<int64_t>(Og, 8); ++to) {
      if (Og % to != 0) continue;
      const int64_t nv = largest_divisor(nvec, std::max<int64_t>(1, (R - 1) / (to + 1)));
      if (to * nv > to0 * nv0 || (to * nv == to0 * nv0 && to > to0)) to0 = to, nv0 = nv;
    }
    std::vector<int64_t> tos = {to0};
    for (int64_t t : {2, 4, 8})
      if (Og % t == 0) tos.push_back(t);
    const int64_t to = knobs.define("tile_o_grouped", distinct(tos));
    const int64_t nv = knobs.define("tile_vectors_grouped",
                                    distinct({largest_divisor(nvec, std::max<int64_t>(1, (R - 1) / (to + 1))), nv0,
                                              largest_divisor(nvec, 2)}));
    te::Axis n = out.leaves()[0], o = out.leaves()[1];
    auto [ob, oi] = out.split(o, to);
    te::Axis par = out.fuse(n, ob);
    out.parallel(par);
    te::Axis ow = out.leaves().back();
    if (OW >= 2 * L) {
      auto [wo, wi] = out.split(ow, L);
      out.vectorize(wi);
    } else {
      out.vectorize(ow);
    }
    te::Stage& y = *s.find(gplane.get());
    y.compute_at(out, par);
    y.cover(2);
    auto [qo, qi] = y.split(y.axis(2), L);
    auto [qoo, qoi] = y.split(qo, nv);
    y.reorder({qoo, y.reduce_axis(0), y.reduce_axis(1), y.reduce_axis(2), y.axis(1), qoi, qi});
    y.unroll(y.reduce_axis(2));
    y.unroll(y.axis(1));
    y.unroll(qoi);
    y.vectorize(qi);
    return true;
  }
  if (rows) {
    // Register tile: tile_o output channels x a piece of one output row. Default: whole rows of
    // as many channels (a divisor of O) as the registers hold beside one input vector per column
    // and the broadcast weight. A piece that does not divide the row, or channels that do not
    // divide O, leave guarded tail loops that GCC does not vectorize: MobileNet's stem (7 vectors
    // per row) ran 3x slower in 4 + 3 vector pieces of 6 channels than in whole rows of 2.
    // With fewer registers than 2 whole rows need (AVX2 on a 112-wide row), pieces of the row that
    // divide it, 6 channels at a time.
    // A grouped conv's tile stays in one group (Og channels), whose channels read the same input.
    const int64_t nv = (OW + g.vector_lanes - 1) / g.vector_lanes;
    const int64_t by_rows = (R - 1) / (nv + 1);
    const int64_t Og = O / std::max<int64_t>(1, g.anchor ? g.anchor->attrs_as<ops::Conv2dAttrs>().groups : 1);
    const int64_t to0 = largest_divisor(Og, by_rows >= 2 ? by_rows : 6);
    std::vector<int64_t> tiles = {to0};
    for (int64_t t : {2, 4, 6, 8})
      if (Og == O || Og % t == 0) tiles.push_back(t);
    const int64_t to = std::min<int64_t>(O, knobs.define("tile_o_rows", distinct(tiles)));
    const int64_t piece0 = (to + 1) * nv <= R - 1 ? nv : largest_divisor(nv, fit_for(to));
    const int64_t piece =
        std::min<int64_t>(nv, knobs.define("tile_vectors_rows", distinct({piece0, nv, fit_for(to)})));
    const int64_t chunks = (nv + piece - 1) / piece;
    const int64_t tw = std::min(OW, (nv + chunks - 1) / chunks * g.vector_lanes);
    te::Axis n = out.leaves()[0], o = out.leaves()[1], oh = out.leaves()[2], ow = out.leaves()[3];
    auto [ob, oi] = out.split(o, to);
    auto [wb, wi] = out.split(ow, tw);
    out.reorder({n, ob, oh, wb, oi, wi});
    te::Axis par = out.fuse(out.fuse(n, ob), oh);
    out.parallel(par);
    out.vectorize(wi);
    te::Stage& y = *s.find(rows.get());
    y.compute_at(out, wb);
    auto [yo, yi] = y.split(y.axis(3), g.vector_lanes);
    y.reorder({y.reduce_axis(0), y.reduce_axis(1), y.reduce_axis(2), y.axis(1), yo, yi});
    y.unroll(y.axis(1));
    y.unroll(yo);
    y.vectorize(yi);
    return true;
  }
  if (plane) {
    // Depthwise over the flattened plane: (n, c) in parallel; a block of output rows at a time,
    // its padded input (every stride phase) built just before and its grid of outputs computed
    // one vector at a time with the taps unrolled inside (the vector accumulates in a register).
    // The block: the whole plane when it and its input fit in half the L1, else as many rows as
    // do (a divisor of OH: no tail block).
    te::Axis nc = fuse_leading(out, 2);
    out.parallel(nc);
    const int64_t L = g.vector_lanes;
    const int64_t phases = pad->shape[2] * pad->shape[3], Wq = pad->shape[5];
    const int64_t per_row = 4 * Wq * (1 + phases);
    const int64_t th0 = largest_divisor(OH, std::max<int64_t>(1, g.target->l1d_bytes / 2 / per_row));
    const int64_t th = knobs.define("rows_block", distinct({th0, OH, largest_divisor(OH, std::max<int64_t>(1, th0 / 2))}));
    auto [ohb, ohi] = out.split(out.leaves()[1], th);
    te::Axis ow = out.leaves()[3];
    if (heavy_epilogue) {
      // The block's rows flattened: whole vectors over the compact copy (see heavy_epilogue).
      te::Axis p = out.fuse(ohi, ow);
      auto [po, pi] = out.split(p, L);
      out.vectorize(pi);
      te::Stage& a = *s.find(anchor.op().get());
      a.compute_at(out, ohb);
      a.vectorize(a.leaves().back());
    } else if (OW >= 2 * L) {
      auto [wo, wi] = out.split(ow, L);
      out.vectorize(wi);
    } else {
      out.vectorize(ow);
    }
    schedule_grid_at(s, out, ohb, plane, pad, L);
    return true;
  }
  if (dw) {
    // Depthwise: (n, c) in parallel, one output row accumulated over the taps, vectorized along it.
    te::Stage& d = *s.find(dw.get());
    te::Axis nc = fuse_leading(out, 2);
    out.parallel(nc);
    // A block of output rows accumulated over the taps at a time: as many rows as the registers
    // hold accumulators beside the taps' weights and the loads (an input row vector serves up to
    // KH output rows), at least about 4 vectors of outputs; a divisor of OH (no tail block).
    const int64_t R = g.vector_registers, L = g.vector_lanes;
    const int64_t taps = dw->reduce_axes().at(1).extent * dw->reduce_axes().at(2).extent;
    const int64_t rows_fit = std::max<int64_t>(1, R - taps - 3);
    const int64_t th0 = largest_divisor(OH, std::max<int64_t>(rows_fit, 4 * L / OW));
    const int64_t th = knobs.define("rows_block", distinct({th0, largest_divisor(OH, std::max<int64_t>(1, th0 / 2)),
                                                            largest_divisor(OH, th0 * 2), 1}));
    te::Axis oh0 = out.leaves()[1];
    auto [ohb, ohi] = out.split(oh0, th);
    te::Axis ow = out.leaves()[3];
    if (epilogue_calls && th * OW >= L) {
      // The block's rows are contiguous in the output and in the block's buffer: the epilogue
      // runs over them flattened, in whole vectors, where along a 28- or 14-wide row GCC left the
      // loop scalar and called expf per element (EfficientNet's strided SiLU depthwise convs).
      auto [po, pi] = out.split(out.fuse(ohi, ow), L);
      out.vectorize(pi);
    } else if (OW >= 2 * L) {
      auto [wo, wi] = out.split(ow, L);
      out.vectorize(wi);
    } else {
      out.vectorize(ow);
    }
    d.compute_at(out, ohb);
    if (pad) {
      // The padded input built just before its use: only the rows a block of output rows reads
      // (the few rows two blocks share are copied twice), so that it stays in L1 (a 114x114
      // plane is 52 KB, more than a 48 KB L1); the whole plane when one block covers it.
      te::Stage& p = *s.find(pad.get());
      const int64_t by_rows = knobs.define("pad_rows", th < OH ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1});
      p.compute_at(out, by_rows ? ohb : nc);
      if (pad->shape[3] >= L) {
        te::Axis pw = p.leaves().back();
        auto [pwo, pwi] = p.split(pw, L);
        p.vectorize(pwi);
      }
    }
    // Taps innermost and unrolled inside the vector loop: each vector of outputs accumulates in a
    // register instead of being reloaded and stored once per tap. With several rows and a row of
    // several vectors, the rows go inside the column vectors, so the rows' loads of the same input
    // vector sit side by side (the compiler keeps one).
    te::Axis drow = d.axis(2), dcol = d.axis(3);
    if (th > 1 && OW % L == 0 && OW > L) {
      auto [dwo, dwi] = d.split(dcol, L);
      d.reorder({dwo, drow, dwi, d.reduce_axis(0), d.reduce_axis(1), d.reduce_axis(2)});
      dcol = dwi;
    } else {
      d.reorder({drow, dcol, d.reduce_axis(0), d.reduce_axis(1), d.reduce_axis(2)});
    }
    d.unroll(d.reduce_axis(0));
    d.unroll(d.reduce_axis(1));
    d.unroll(d.reduce_axis(2));
    if (th > 1) d.unroll(drow);
    d.vectorize(dcol);
    return true;
  }
  if (wpack) {
    te::Stage& wp = *s.find(wpack.get());
    te::Axis oc = fuse_leading(wp, 2);
    wp.parallel(oc);
  }
  // The weight block is the blocked layout's innermost extent (one vector of the target).
  const int64_t kBlock = yc->shape.back();
  const int64_t Oo = (O + kBlock - 1) / kBlock;
  // A grouped conv's tile stays in one group (grouped_blocked): blocks of other groups read other
  // input channels, a broadcast each.
  const int64_t groups = g.anchor ? g.anchor->attrs_as<ops::Conv2dAttrs>().groups : 1;
  const bool two_blocks = Oo >= 2 && (groups == 1 || (O / groups) % (2 * kBlock) == 0);
  const int64_t tile_oc =
      knobs.define("tile_oc", two_blocks ? std::vector<int64_t>{2 * kBlock, kBlock} : std::vector<int64_t>{kBlock});
  if (tile_oc % kBlock != 0) throw Error("conv2d schedule: tile_oc must be a multiple of " + std::to_string(kBlock));
  // Accumulators (tile_oc / B vectors per pixel) + the tile's weight vectors + one broadcast
  // input fill the registers: 14 pixels x 2 vectors with AVX-512's 32. With 16 registers (AVX2)
  // that rule gives 6 pixels, which on the 56, 28 and 14-wide planes falls to a divisor of 4:
  // 8 accumulators, too few to cover the FMA latency. There the weight vectors are the FMAs'
  // memory operands instead, leaving the accumulators all but two registers: 7 pixels x 2
  // vectors, and 7 divides those planes (AVX2 3x3 convs 58% of SGEMM before, 80-89% with the taps
  // order below). The other rule's count stays a candidate.
  const bool few_registers = R < 32;
  const int64_t v = tile_oc / kBlock, fit_weights_in_registers = std::max<int64_t>(1, (R - v - 1) / v);
  const int64_t fit = few_registers ? std::max<int64_t>(1, (R - 2) / v) : fit_weights_in_registers;
  auto part = [&](int64_t num, int64_t den) { return std::max<int64_t>(1, fit_weights_in_registers * num / den); };
  int64_t th = 1, tw = 1;
  const int64_t pixels = knobs.define(
      "tile_pixels", distinct(v >= 2 ? std::vector<int64_t>{fit, fit_weights_in_registers, part(6, 7), part(4, 7), part(3, 7), part(2, 7)}
                                     : std::vector<int64_t>{part(14, 30), part(24, 30), part(28, 30), part(8, 30)}));
  pixel_tile(OH, OW, pixels, th, tw);
  te::Axis n = out.leaves()[0];
  te::Axis o = out.leaves()[1], oh = out.leaves()[2], ow = out.leaves()[3];
  // Stored blocked, the axes are (n, block, oh, ow, lane): a tile is tile_oc / B blocks.
  const te::Axis lane = stored ? out.leaves()[4] : te::Axis{};
  auto [ob, oi] = out.split(o, stored ? tile_oc / kBlock : tile_oc);
  auto [hb, hi] = out.split(oh, th);
  auto [wb, wi] = out.split(ow, tw);
  // n, ob, hb, wb | oi, hi, wi
  // Write-out of a tile (NCHW from the blocked tile): along the output rows (0), or along the
  // channels with vectors read from the tile (1). Along the rows the tile is read with the block's
  // stride, and GCC leaves that loop scalar: with an epilogue that calls expf (SiLU) it called
  // expf per element, along the channels once per vector (libmvec). EfficientNetV2-S's SiLU 3x3
  // convs 109 -> 170 GFLOP/s, its 1x1 convs on 7x7 65 -> 105 (1 thread); without calls, along
  // the rows was as fast or faster on ResNet-50's shapes.
  const int64_t copy = knobs.define("copy_out", epilogue_calls ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1});
  // Order of the tiles. Channel blocks outside: a block's weights stay in cache over the whole
  // plane, but the input plane is read once per block. Row blocks outside: a row block's input
  // stays in cache over every channel block, but all the weights are read once per row block.
  // Default: rows outside when all the weights fit in half the target's L2 and the input is larger
  // (ResNet's 1x1 convs over 28x28 planes), so that what is re-read comes from L2.
  const auto& raxes = yc->reduce_axes();
  const int64_t C = raxes.at(0).extent, KH = raxes.at(1).extent, KW = raxes.at(2).extent;
  const Shape& xs = (pad ? pad->shape : yc->inputs().at(0)->producer_shape());
  const int64_t w_bytes = O * C * KH * KW * 4, x_bytes = C * xs.at(2) * xs.at(3) * 4;
  const int64_t rows_first = w_bytes <= g.target->l2_bytes / 2 && x_bytes > w_bytes ? 1 : 0;
  const bool rows_outer = knobs.define("rows_outer", {rows_first, 1 - rows_first}) == 1;
  // Reduction blocks: a tile reads its tile_oc channels' weights over all C input channels, once
  // per tile; when they exceed half of L1 (ResNet-50's 1x1 convs from 512 and 1024 channels: 64
  // and 128 KB per tile; its 3x3 convs from 128 channels up) they come from L2 for every tile.
  // Blocked, the conv runs over a group of rows in passes of k_block input channels: a pass's
  // weights stay in L1 over the group's tiles, the accumulators go to the group's buffer between
  // passes, and a pass's input over the plane is contiguous memory, which the prefetchers follow
  // (the tiles' rows 56 bytes apart, unblocked, came from the cache of the core that wrote them
  // at the latency of each line). Not by default for a 1x1 conv with the rows outside: there a
  // row's input stays in L1 over all the channel tiles, which the passes would give up. On a Xeon
  // (48 KB L1, 2 MB L2; 2 threads) ResNet-50's 3x3 convs ran 1.15x faster, its 1x1 convs with
  // the channel tiles outside 1.05-1.4x, its 1x1 convs with the rows outside up to 1.5x slower.
  // Not by default with 16 registers either: the tile takes all of them (see tile_pixels), and
  // with the window copies around the pass GCC spilled half the accumulators (AVX2 code on the
  // same Xeon 1.5-2x slower).
  const int64_t tap_bytes = KH * KW * tile_oc * 4;
  const int64_t kc_l1 = block_divisor(C, g.target->l1d_bytes / 2 / tap_bytes, kBlock);
  const bool passes = !few_registers && C * tap_bytes > g.target->l1d_bytes / 2 &&
                      (KH * KW > 1 || !rows_outer);
  const int64_t kc = knobs.define("k_block", distinct({passes ? kc_l1 : C, passes ? C : kc_l1, block_divisor(C, kc_l1 / 2, kBlock),
                                                        block_divisor(C, kc_l1 * 2, kBlock)}));
  if (C % kc != 0) throw Error("conv2d schedule: k_block must divide the input channels");
  // Groups of row tiles in passes; without passes a tile is its own group.
  const int64_t row_tiles = (OH + th - 1) / th, oc_tiles = (O + tile_oc - 1) / tile_oc;
  const int64_t per_group = kc < C ? rows_per_group(row_tiles, tile_oc * th * OW * 4, N * oc_tiles, *g.target) : 1;
  auto [hg, hgi] = out.split(hb, per_group);
  te::Axis first = rows_outer ? hg : ob, second = rows_outer ? ob : hg;
  if (stored) {
    out.reorder({n, first, second, hgi, wb, oi, hi, wi, lane});
    out.vectorize(lane);
  } else if (copy == 1) {
    auto [oio, oii] = out.split(oi, kBlock);
    out.reorder({n, first, second, hgi, wb, oio, hi, wi, oii});
    out.vectorize(oii);
  } else {
    out.reorder({n, first, second, hgi, wb, oi, hi, wi});
  }
  te::Axis par = out.fuse(out.fuse(n, first), second);
  if (N * oc_tiles * (row_tiles / per_group) > 1) out.parallel(par);
  // The padded input in passes: copied whole before the conv, or by each group of rows (its rows
  // and their halo, all channels) just before the group's passes, which read it while it is fresh
  // in the core's L2 (copied whole, the pad's writes and the conv's reads of one row group lie a
  // whole plane apart in time). By default where a group has one channel tile: with several, each
  // tile's iteration copies the group's rows again. DenseNet-121's 3x3 convs to 32 channels on 56,
  // 28 and 14-wide planes ran 1.16-1.2x faster (Xeon, 2 threads); ResNet-50's, with 4 to 32
  // channel tiles, up to 1.16x slower.
  const int64_t pad_in_group = pad && kc < C ? knobs.define("pad_in_group", oc_tiles == 1 ? std::vector<int64_t>{1, 0}
                                                                                        : std::vector<int64_t>{0, 1})
                                             : 0;
  if (pad_in_group) {
    te::Stage& p = *s.find(pad.get());
    p.compute_at(out, par);
    vectorize_pad(p);
  } else if (pad) {
    schedule_pad(rows_outer && rows_split_fits(pad->shape, g.target->cores));
  }
  te::Stage& y = *s.find(yc.get());
  y.compute_at(out, kc < C ? par : wb);
  // Register tile: taps outside, then (rows, columns, oc blocks) unrolled, the block's lanes
  // vectorized. The oc blocks innermost: each pixel's broadcast input is used by the tile's weight
  // vectors at once and dies, so the registers hold the accumulators, the weight vectors and one
  // broadcast. (With the blocks outside, GCC kept every pixel's broadcast live for the second block
  // and spilled 11 of 28 accumulators to the stack on AVX-512.)
  //
  // With 16 registers the taps (kh, kw) go outside the input channels: with the channels outside,
  // GCC unrolls the short kw loop and shares the loads of neighbouring taps (tap kw + 1 of one
  // pixel is tap kw of the next), which keeps more broadcasts live than 16 registers hold, and it
  // spilled accumulators in the hot loop. With AVX-512's 32 the order made no difference beyond
  // noise on the benchmark models' shapes (some 5% better, some 5% worse); the tuner can choose.
  const bool taps_outer = knobs.define("taps_outer", few_registers ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1}) == 1;
  const te::Axis ocb = y.axis(1), lanes = y.axis(4), ic = y.reduce_axis(0), kh = y.reduce_axis(1), kw = y.reduce_axis(2);
  if (kc < C) {
    // The group's rows in register tiles, inside each pass.
    auto [yho, yhi] = y.split(y.axis(2), th);
    auto [ywo, ywi] = y.split(y.axis(3), tw);
    auto [ico, ici] = y.split(ic, kc);
    if (taps_outer)
      y.reorder({ico, yho, ywo, kh, kw, ici, yhi, ywi, ocb, lanes});
    else
      y.reorder({ico, yho, ywo, ici, kh, kw, yhi, ywi, ocb, lanes});
    y.unroll(yhi);
    y.unroll(ywi);
  } else {
    const std::vector<te::Axis> reductions = taps_outer ? std::vector<te::Axis>{kh, kw, ic} : std::vector<te::Axis>{ic, kh, kw};
    y.reorder({reductions[0], reductions[1], reductions[2], y.axis(2), y.axis(3), ocb, lanes});
    y.unroll(y.axis(2));
    y.unroll(y.axis(3));
  }
  y.unroll(ocb);
  y.vectorize(lanes);
  return true;
}

void schedule_conv2d(GroupSchedule& g) {
  const Tensor& anchor = g.anchor_outputs.at(0);
  // The conv's result spread over a larger output (a squeeze-excitation's conv of one pixel,
  // times the map it scales): the conv and its epilogue of its own shape (the bias, the
  // excitation's sigmoid, once per channel) keep the conv's schedule, at the root; the output's
  // loops read the result. Given the injective schedule whole, the group ran the conv as scalar
  // loops.
  const bool spread = g.outputs.size() == 1 && g.outputs[0].op() != anchor.op() && g.outputs[0].ndim() == 4 &&
                      anchor.ndim() == 4 && numel(g.outputs[0].shape()) > numel(anchor.shape());
  Tensor result = spread ? anchor : g.outputs.at(0);
  if (spread)
    for (te::Stage* st : g.sch->stages()) {  // producers first: the chain from the anchor, in order
      const te::Operation& op = st->op();
      if (op->kind != te::OpKind::Compute || op->shape != anchor.shape() || op->is_reduction()) continue;
      const std::vector<te::Operation> ins = op->inputs();
      if (std::find(ins.begin(), ins.end(), result.op()) != ins.end()) result = Tensor(op);
    }
  if (!schedule_conv2d_stages(g, result)) return schedule_injective(g);
  if (!spread) return;
  te::Stage& o = (*g.sch)[g.outputs[0]];
  const Shape& os = g.outputs[0].shape();
  const te::Axis nc = fuse_leading(o, 2);
  const te::Axis plane = o.fuse(o.leaves()[1], o.leaves()[2]);
  if (os[2] * os[3] >= g.vector_lanes) {
    auto [po, pi] = o.split(plane, g.vector_lanes);
    o.vectorize(pi);
  }
  if (numel(os) >= 16384) o.parallel(nc);
}

std::vector<Tensor> conv2d_transpose(const ir::CallNode& c, const std::vector<Tensor>& in) {
  const auto& a = c.attrs_as<ops::ConvTranspose2dAttrs>();
  const Tensor& x = in.at(0);
  const Tensor& w = in.at(1);
  require_float(c, x);
  ConvGeom g = conv_geom(c, x, w, a.strides, a.padding, a.dilation, a.groups);
  const int64_t Og = w.shape()[1], Cg = g.C / g.G;
  const bool has_bias = in.size() > 2;
  IterVar rc = te::reduce_axis(Cg, "rc"), rh = te::reduce_axis(g.KH, "rh"), rw = te::reduce_axis(g.KW, "rw");
  // out[oh] gathers x[ih] with oh = ih * s + kh * d - pad, i.e. ih = (oh + pad - kh * d) / s when exact.
  Tensor Y = te::compute(out_shape(c), [&](Expr n, Expr o, Expr oh, Expr ow) {
    Expr th = oh + g.pt - rh.var * g.dh, tw = ow + g.pl - rw.var * g.dw;
    Expr ih = th / g.sh, iw = tw / g.sw;
    std::vector<Expr> conds = {th >= 0, ih < g.H, tw >= 0, iw < g.W};
    if (g.sh > 1) conds.push_back(tir::eq(th % g.sh, idx(0)));
    if (g.sw > 1) conds.push_back(tir::eq(tw % g.sw, idx(0)));
    Expr ic = g.G == 1 ? rc.var : (o / Og) * Cg + rc.var;
    Expr v = x(n, ic, clamp(ih, 0, g.H - 1), clamp(iw, 0, g.W - 1)) * w(ic, o % Og, rh.var, rw.var);
    return te::sum(tir::select(all_of(conds), v, fconst(x.dtype(), 0.0)), {rc, rh, rw});
  }, "conv2d_transpose_sum");
  return {te::compute(Y.shape(), [&](Expr n, Expr o, Expr oh, Expr ow) {
    return has_bias ? Y(n, o, oh, ow) + in[2](o) : Y(n, o, oh, ow);
  }, "conv2d_transpose")};
}

// The geometry of a conv2d call from its types (the weight plain OIHW or packed 5-d).
struct CallConv {
  int64_t C, O, KH, KW, OH, OW, G, Cg, sw;
  bool f32, pointwise;
};
CallConv call_conv(const ir::CallNode& c) {
  const auto& a = c.attrs_as<ops::Conv2dAttrs>();
  const Shape& xs = ir::as_tensor(c.args.at(0)->type).shape;
  const Shape& ws = ir::as_tensor(c.args.at(1)->type).shape;
  const Shape& os = out_shape(c);
  CallConv g{};
  g.C = xs.size() == 4 ? xs[1] : 0;
  g.O = os.size() == 4 ? os[1] : 0;
  g.KH = ws.size() >= 4 ? ws[2] : 0;
  g.KW = ws.size() >= 4 ? ws[3] : 0;
  g.OH = os.size() == 4 ? os[2] : 0;
  g.OW = os.size() == 4 ? os[3] : 0;
  g.G = a.groups;
  g.Cg = ws.size() >= 4 ? ws[1] : 0;
  g.sw = a.strides.size() == 2 ? a.strides[1] : 1;
  g.f32 = ir::as_tensor(c.args.at(0)->type).dtype == DType::f32 && ir::as_tensor(c.args.at(1)->type).dtype == DType::f32;
  auto all = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
  };
  g.pointwise = g.KH == 1 && g.KW == 1 && all(a.strides, 1) && all(a.padding, 0) && xs.size() == 4 &&
                os.size() == 4 && xs[2] == os[2] && xs[3] == os[3];
  return g;
}

// The weight's block: the packed one's, or the target's for a plain weight.
int64_t packed_block(const ir::CallNode& c, const target::Target& t) {
  const Shape& ws = ir::as_tensor(c.args.at(1)->type).shape;
  return ws.size() == 5 ? ws[4] : weight_block(t);
}

// groups == 1 f32 convs read the packed weight; these implementations do.
std::string why_not_packed(const CallConv& g) {
  if (g.G != 1) return "grouped (groups = " + std::to_string(g.G) + ")";
  if (!g.f32) return "not f32";
  return "";
}

// What conv2d.blocked can keep channel-blocked (nChw<B>c, B its weight block): its result, the
// tensors of the result's shape added to it, and its data where it reads it unpadded at stride 1
// (a 3x3 conv's padded copy is NCHW; a strided 1x1 conv reads every other line of a kept row:
// ResNet-50's 1024->2048 projection ran 1.14x slower kept).
// Kept, a 1x1 conv's input tile is one cache line per pixel for B channels and its result whole
// vectors per pixel; from and to NCHW, a channel's row at a time (C/B times the lines per tile)
// and its result written back a lane per plane. A C replica of the register tile (14 pixels x 2
// vectors, 1 thread, Xeon, data in L2) ran ResNet-50's 512->128 on 28x28 at 202 GFLOP/s kept
// against 146 from and to NCHW, 256->64 on 56x56 207 against 113, 256->1024 on 14x14 220 against 165.
KeptLayoutSupport blocked_layouts(const ir::FunctionNode& fn, const target::Target& t) {
  KeptLayoutSupport s;
  const ir::CallNode* conv = nullptr;
  for (const ir::Expr& e : ir::post_order(fn.body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && c->op == ops::OpCode::Conv2d) {
      if (conv) return s;
      conv = c;
    }
  if (!conv || !ir::is_tensor(fn.body->type) || !why_not_packed(call_conv(*conv)).empty()) return s;
  const int64_t B = packed_block(*conv, t);
  const Shape& xs = ir::as_tensor(conv->args.at(0)->type).shape;
  const Shape& y = ir::as_tensor(fn.body->type).shape;
  if (xs.size() != 4 || y != out_shape(*conv) || y[1] % B != 0 || B != t.vector_lanes()) return s;
  s.layout = blocked_layout(B);
  s.result = true;
  const auto& a = conv->attrs_as<ops::Conv2dAttrs>();
  const Shape& ws = ir::as_tensor(conv->args.at(1)->type).shape;
  const int64_t reach_h = (y[2] - 1) * a.strides[0] + (ws[2] - 1) * a.dilation[0] + 1,
                reach_w = (y[3] - 1) * a.strides[1] + (ws[3] - 1) * a.dilation[1] + 1;
  const bool reads_directly =
      a.padding[0] == 0 && a.padding[1] == 0 && reach_h <= xs[2] && reach_w <= xs[3] && a.strides[0] == 1 && a.strides[1] == 1;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::Expr& p = fn.params[i];
    if (!ir::is_tensor(p->type)) continue;
    bool weight = false;
    for (size_t k = 1; k < conv->args.size(); ++k) weight |= conv->args[k].get() == p.get();
    if (weight) continue;
    if (p.get() == conv->args[0].get()) {
      if (reads_directly && xs[1] % B == 0) s.params.push_back(static_cast<int>(i));
    } else if (ir::as_tensor(p->type).shape == y) {
      // Whether or not the result is kept: a chain of residual blocks ends at a strided
      // projection, which reads NCHW, so the last block's result is plain; with residuals kept
      // only beside kept results, none of the chain's would be.
      s.params.push_back(static_cast<int>(i));
    }
  }
  return s;
}

}  // namespace

void register_conv(Registry& r) {
  using ops::OpCode;
  auto conv_impl = [](std::string name, Variant v, std::function<std::string(const ir::CallNode&, const target::Target&)> why_not,
                      std::function<int(const ir::CallNode&, const target::Target&)> priority) {
    OpImpl i;
    i.name = std::move(name);
    i.compute = [v](const ir::CallNode& c, const std::vector<Tensor>& in, const target::Target& t) { return conv2d(v, c, in, t); };
    i.schedule = schedule_conv2d;
    i.why_not = std::move(why_not);
    i.priority = std::move(priority);
    return i;
  };
  // Without records, the preferred implementation of a shape is the one measured best for it
  // when these thresholds were set: pointwise convs with few input channels as a GEMM over the
  // plane, short reductions over wide rows along the rows, the rest blocked.
  OpImpl flat = conv_impl("conv2d.flat", Variant::Flat,
              [](const ir::CallNode& c, const target::Target&) {
                CallConv g = call_conv(c);
                std::string w = why_not_packed(g);
                return !w.empty() ? w : g.pointwise ? "" : "not a 1x1 stride-1 unpadded conv";
              },
              [](const ir::CallNode& c, const target::Target& t) {
                CallConv g = call_conv(c);
                const bool small_plane_many_channels = g.OH * g.OW <= kSmallPlanePixels && g.C >= kSmallPlaneBlockedChannels;
                // A plane of less than a vector (a squeeze-excitation's 1x1) has no pixel vectors:
                // blocked vectorizes over the output channels instead.
                const bool sub_vector_plane = g.OH * g.OW < t.vector_lanes();
                return g.C <= kFlatPathMaxChannels && !small_plane_many_channels && !sub_vector_plane ? 30 : 5;
              });
  OpImpl rows = conv_impl("conv2d.rows", Variant::Rows,
              [](const ir::CallNode& c, const target::Target&) -> std::string {
                return call_conv(c).f32 ? "" : "not f32";
              },
              [](const ir::CallNode& c, const target::Target&) {
                CallConv g = call_conv(c);
                if (g.G > 1 && g.Cg == 1) return 3;  // depthwise: the depthwise implementations first
                return g.Cg * g.KH * g.KW <= kPixelPathMaxReduction && g.OW >= kPixelPathMinWidth &&
                               g.sw <= kPixelPathMaxStride
                           ? 20
                           : 3;
              });
  OpImpl blocked = conv_impl("conv2d.blocked", Variant::Blocked,
                 [](const ir::CallNode& c, const target::Target&) { return why_not_packed(call_conv(c)); }, nullptr);
  blocked.kept_layouts = blocked_layouts;
  OpImpl gblocked = conv_impl("conv2d.grouped_blocked", Variant::GroupedBlocked,
                   [](const ir::CallNode& c, const target::Target& t) -> std::string {
                     CallConv g = call_conv(c);
                     if (!g.f32) return "not f32";
                     if (g.G <= 1 || g.Cg <= 1) return "not grouped with several channels a group";
                     const int64_t B = packed_block(c, t);
                     if (g.O % g.G != 0 || (g.O / g.G) % B != 0)
                       return "groups of " + std::to_string(g.O / g.G) + " output channels, not whole vectors of " +
                              std::to_string(B);
                     return "";
                   },
                   // Before grouped_plane: RegNetX's 16-channel groups 1.3-1.6x faster on 7x7 and 14x14
                   // maps (AVX-512), ResNeXt's 16 and 32-channel groups 1.3-2.7x; with AVX2's 8-lane
                   // blocks also groups of 8 (RegNet-Y), 1.1-1.5x (sy_nn_bench, Zen 4, 2 threads).
                   [](const ir::CallNode&, const target::Target&) { return kDefaultPriority - 1; });
  auto why_not_depthwise = [](const ir::CallNode& c, const target::Target&) -> std::string {
    CallConv g = call_conv(c);
    return g.G > 1 && g.Cg == 1 && g.O == g.G ? "" : "not depthwise (groups == channels, one output each)";
  };
  OpImpl depthwise = conv_impl("conv2d.depthwise", Variant::Depthwise, why_not_depthwise, nullptr);
  OpImpl plane = conv_impl("conv2d.depthwise_plane", Variant::DepthwisePlane, why_not_depthwise,
                   // Preferred: 1.5-2x on MobileNetV2's 14x14 and 28x28 planes; strided too, since its
                   // padded copy reads a row's column phases as one interleaved group (schedule_grid_at):
                   // 1.1-1.8x on the stride-2 3x3 and 5x5 convs of MobileNetV2 and EfficientNet with
                   // AVX-512, 1.4-2.3x with AVX2 (sy_nn_bench, 1 thread).
                   [](const ir::CallNode&, const target::Target&) { return kDefaultPriority + 1; });
  OpImpl gplane = conv_impl("conv2d.grouped_plane", Variant::GroupedPlane,
                   [](const ir::CallNode& c, const target::Target&) -> std::string {
                     CallConv g = call_conv(c);
                     if (!g.f32) return "not f32";
                     return g.G > 1 && g.Cg > 1 ? "" : "not grouped with several channels a group";
                   },
                   [](const ir::CallNode&, const target::Target&) { return kDefaultPriority - 2; });
  OpImpl direct = conv_impl("conv2d.direct", Variant::Direct,
                [](const ir::CallNode& c, const target::Target&) -> std::string {
                  return why_not_packed(call_conv(c)).empty() ? "groups == 1 f32: the packed-weight implementations apply" : "";
                },
                [](const ir::CallNode&, const target::Target&) { return 1; });
  for (OpImpl* i : {&flat, &rows, &blocked, &gblocked, &depthwise, &plane, &gplane, &direct}) r.add(OpCode::Conv2d, std::move(*i));
  r.add(OpCode::ConvTranspose2d, conv2d_transpose, nullptr);
}

}  // namespace sy::topi::nn
