// conv2d.nhwc: depthwise and dense (groups == 1) convs with the channels innermost, so that a
// vector holds one pixel's channels. On the small planes of MobileNet-style networks (7x7, 14x14)
// a plane is not whole vectors: the NCHW implementations there leave lanes empty and pay a padded
// copy and a short write-back per channel, where NHWC fills every vector whatever the plane. It
// pays when the activations stay NHWC from one such conv to the next (native/kept_layouts.h: the
// "nhwc" layout kept between calls, the same layout oneDNN's extern convolutions keep on AVX-512),
// so without records it is taken only along a chain of depthwise convs and the convs next to them
// (chain_role); alone it computes plain NCHW too (correct, slower: a lane per plane).
#include <algorithm>
#include <array>
#include <set>

#include "ir/visitor.h"
#include "ops/op.h"
#include "topi/nn_util.h"

namespace sy::topi::nn {

namespace {

// Input channels a convolution with several taps sums over before its next tap: a cache line's
// floats (see schedule_nhwc).
constexpr int64_t kChannelsBlock = 16;

// Whether one input channel's window -- `rows` input rows of `cols` pixels, `row_bytes` and
// `col_bytes` apart -- puts more cache lines into one set of the L1 than 3/4 of its ways (64-byte
// lines, 64 sets: Zen 3's 32 KB 8-way and Zen 5's 48 KB 12-way alike; the rest for the weights'
// streams). Summing a channel at a time over all the taps, the kernel then reloads the window
// from L2 for every channel. (ResNet-50's 3x3 stride-2 256 conv on 28x28, kept: 12 lines in
// each of 4 sets, 0.93 ms; in channel blocks 0.64.)
bool window_thrashes_l1(int64_t rows, int64_t cols, int64_t row_bytes, int64_t col_bytes, const target::Target& t) {
  constexpr int64_t kLine = 64, kSets = 64;
  const int64_t ways = std::max<int64_t>(1, t.l1d_bytes / kLine / kSets * 3 / 4);
  std::array<std::set<int64_t>, kSets> lines_of_set;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t line = (r * row_bytes + c * col_bytes) / kLine;
      std::set<int64_t>& in_set = lines_of_set[line % kSets];
      in_set.insert(line);
      if (static_cast<int64_t>(in_set.size()) > ways) return true;
    }
  return false;
}

struct NhwcConv {
  bool depthwise = false, dense = false;
  int64_t N, C, H, W, O, KH, KW, OH, OW, sh, sw, pt, pl, dh, dw;
};

// The call's geometry; neither flag set when this implementation does not compute it.
NhwcConv nhwc_conv(const ir::CallNode& c) {
  const auto& a = c.attrs_as<ops::Conv2dAttrs>();
  const Shape& xs = ir::as_tensor(c.args.at(0)->type).shape;
  const Shape& ws = ir::as_tensor(c.args.at(1)->type).shape;
  const Shape& os = out_shape(c);
  NhwcConv g{};
  if (xs.size() != 4 || os.size() != 4 || ws.size() < 4 || a.strides.size() != 2 || a.padding.size() != 4 ||
      a.dilation.size() != 2)
    return g;
  g.N = xs[0], g.C = xs[1], g.H = xs[2], g.W = xs[3];
  g.O = os[1], g.OH = os[2], g.OW = os[3];
  g.KH = ws[2], g.KW = ws[3];
  g.sh = a.strides[0], g.sw = a.strides[1], g.pt = a.padding[0], g.pl = a.padding[1];
  g.dh = a.dilation[0], g.dw = a.dilation[1];
  g.depthwise = a.groups == g.C && a.groups > 1 && g.O == g.C && ws.size() == 4 && ws[1] == 1;
  g.dense = a.groups == 1;
  return g;
}

std::string why_not_nhwc(const ir::CallNode& c, const target::Target& t) {
  const NhwcConv g = nhwc_conv(c);
  if (!g.depthwise && !g.dense) return "neither depthwise nor groups == 1 (or not 4-d NCHW)";
  if (ir::as_tensor(c.args.at(0)->type).dtype != DType::f32 || ir::as_tensor(c.args.at(1)->type).dtype != DType::f32)
    return "not f32";
  // Output channels in whole vectors: no lane of a pixel's vector left empty, no tail per pixel.
  if (nhwc_lanes(g.O, t) == 0)
    return std::to_string(g.O) + " output channels are not whole vectors of " + std::to_string(t.vector_lanes()) + " or 8";
  return "";
}

std::vector<Tensor> conv2d_nhwc(const ir::CallNode& c, const std::vector<Tensor>& in, const target::Target& t) {
  const std::string why = why_not_nhwc(c, t);
  if (!why.empty()) throw Error("conv2d.nhwc: " + why);
  const NhwcConv g = nhwc_conv(c);
  const Tensor& x = in.at(0);
  const Tensor& w = in.at(1);
  const bool has_bias = in.size() > 2;
  auto with_bias = [&](Expr v, Expr o) { return has_bias ? v + in[2](o) : v; };
  auto read = [&](Expr n, Expr ch, Expr ih, Expr iw) {
    if (g.pt == 0 && g.pl == 0 && (g.OH - 1) * g.sh + (g.KH - 1) * g.dh < g.H && (g.OW - 1) * g.sw + (g.KW - 1) * g.dw < g.W)
      return x(n, ch, ih, iw);
    Expr inside = all_of({ih >= 0, ih < g.H, iw >= 0, iw < g.W});
    return tir::select(inside, x(n, ch, clamp(ih, 0, g.H - 1), clamp(iw, 0, g.W - 1)), fconst(x.dtype(), 0.0));
  };
  if (g.dense) {
    // Y[n][oh][ow][o] = sum over c and the taps of x w: a vector of output channels of the
    // packed weight per input channel and tap, one broadcast input per pixel.
    const bool packed = w.ndim() == 5;
    const int64_t B = packed ? w.shape()[4] : 1, L = nhwc_lanes(g.O, t);
    IterVar rc = te::reduce_axis(g.C, "rc"), rh = te::reduce_axis(g.KH, "rh"), rw = te::reduce_axis(g.KW, "rw");
    // Vectors of L < B lanes (8 of a 16-wide block) index the block through o / L, which the
    // simplifier folds to the vector's index where o = vector * L + lane: o / B would stay a
    // division per lane, a gather.
    auto block_of = [&](Expr o) { return L < B && B % L == 0 ? o / L / (B / L) : o / B; };
    auto lane_of = [&](Expr o) { return L < B && B % L == 0 ? o / L % (B / L) * L + o % L : o % B; };
    Tensor Y = te::compute({g.N, g.OH, g.OW, g.O}, [&](Expr n, Expr oh, Expr ow, Expr o) {
      Expr wv = packed ? w(block_of(o), rc.var, rh.var, rw.var, lane_of(o)) : w(o, rc.var, rh.var, rw.var);
      Expr v = read(n, rc.var, oh * g.sh + rh.var * g.dh - g.pt, ow * g.sw + rw.var * g.dw - g.pl);
      return te::sum(v * wv, {rc, rh, rw});
    }, "conv2d_nhwc");
    return {te::compute({g.N, g.O, g.OH, g.OW}, [&](Expr n, Expr o, Expr oh, Expr ow) {
      return with_bias(Y(n, oh, ow, o), o);
    }, "conv2d")};
  }
  if (w.ndim() != 4) throw Error("conv2d.nhwc: a depthwise conv's weight is plain OIHW");
  // The taps' weights channels innermost (one vector per tap), once per call.
  Tensor Wt = te::compute({g.KH, g.KW, g.C}, [&](Expr kh, Expr kw, Expr ch) { return w(ch, 0, kh, kw); },
                          "conv2d_nhwc_wt");
  IterVar rh = te::reduce_axis(g.KH, "rh"), rw = te::reduce_axis(g.KW, "rw");
  Tensor Y = te::compute({g.N, g.OH, g.OW, g.C}, [&](Expr n, Expr oh, Expr ow, Expr ch) {
    Expr v = read(n, ch, oh * g.sh + rh.var * g.dh - g.pt, ow * g.sw + rw.var * g.dw - g.pl);
    return te::sum(v * Wt(rh.var, rw.var, ch), {rh, rw});
  }, "conv2d_nhwc_dw");
  return {te::compute({g.N, g.C, g.OH, g.OW}, [&](Expr n, Expr ch, Expr oh, Expr ow) {
    return with_bias(Y(n, oh, ow, ch), ch);
  }, "conv2d")};
}

void schedule_nhwc(GroupSchedule& g) {
  te::Schedule& s = *g.sch;
  const Tensor& anchor = g.anchor_outputs.at(0);
  const te::Operation pw = find_stage(anchor, "conv2d_nhwc"), dw = find_stage(anchor, "conv2d_nhwc_dw"),
                      wt = find_stage(anchor, "conv2d_nhwc_wt");
  // A conv of one pixel whose result scales a larger tensor (squeeze-and-excitation): the conv
  // and its sigmoid once per channel, the scaling elementwise, over the channels innermost when
  // stored so. (With the sigmoid inlined into the scaling, EfficientNet-B0 ran 2.4 million exps
  // for 4,000 channels.)
  if (g.outputs.size() == 1 && (pw || dw) && anchor.shape()[2] * anchor.shape()[3] == 1 &&
      numel(g.outputs[0].shape()) > numel(anchor.shape()))
    return schedule_injective(g);
  if (g.outputs.size() != 1 || (!pw && !dw) || !inline_all_but(g, {pw, dw, wt})) return schedule_injective(g);
  te::Stage& out = s[g.outputs[0]];
  // The result stored NHWC (kept for the next call), or plain NCHW: then the channels, a vector
  // in the accumulators, are written a lane per plane (the end of a chain pays it once).
  const bool stored = g.outputs[0].name() == kNhwcStoreStage;
  const Shape& os = anchor.shape();
  const int64_t O = os[1], OW = os[3], R = g.vector_registers, L = nhwc_lanes(O, *g.target);
  if (L == 0) return schedule_injective(g);
  te::Knobs local;
  te::Knobs& knobs = g.knobs ? *g.knobs : local;
  const te::Axis n = out.leaves()[0];
  const te::Axis oh = out.leaves()[stored ? 1 : 2], ow = out.leaves()[stored ? 2 : 3], ch = out.leaves()[stored ? 3 : 1];
  if (pw) {
    // Register tile: tile_pixels pixels of an output row x tile_vectors vectors of output
    // channels; per input channel and tap one broadcast per pixel and one weight vector per
    // column (read by the FMAs from memory). Default: 2 vectors, and as many pixels as the
    // registers hold beside them, one fewer where that divides the row (no tail tile; MobileNet's
    // rows are multiples of 7), the whole row where it is one longer. Measured (sy_nn_bench, 1
    // thread, MobileNetV2's 1x1 convs on 7x7 and 14x14): AVX-512 7x2 195-225 GFLOP/s, ahead of
    // 7x3, 7x4, 6x4 and 4x4 (172 on 384->64); AVX2 6x2 99-110, 7x2 78-100, 4x2 or 4x4 64-70.
    const int64_t vecs = O / L;
    const int64_t tv0 = vecs % 2 == 0 ? 2 : vecs % 3 == 0 ? 3 : 1;
    const int64_t cap = std::max<int64_t>(1, std::min<int64_t>(8, (R - tv0 - 2) / tv0));
    const int64_t tp0 = OW <= cap + 1 ? OW : OW % cap != 0 && OW % (cap - 1) == 0 ? cap - 1 : cap;
    const int64_t tv = knobs.define("tile_vectors_nhwc", distinct({tv0, largest_divisor(vecs, 3), largest_divisor(vecs, 4), 1}));
    const int64_t tp = std::min<int64_t>(OW, knobs.define("tile_pixels_nhwc", distinct({tp0, 4, 6, 7, 8})));
    // Threads over the rows first where the result outweighs the weights: each thread writes
    // whole rows, the rows the next call of the chain reads on that thread (a depthwise conv
    // splits by rows too). Over the blocks of output channels first, each thread wrote part of
    // every pixel, and the next call read half its data from the other core's cache: with the
    // two vCPUs of a Zen 5 on two CCDs, MobileNetV2 ran 12% slower on 2 threads (3.57 vs 3.12
    // ms). Otherwise (weights larger than the result: a small plane) each thread reads its
    // share of the weights; rows first there too made MobileNetV2 and EfficientNet-B0 5-6%
    // slower.
    int64_t weight_bytes = O * 4;
    for (const te::IterVar& r : pw->reduce_axes()) weight_bytes *= r.extent;
    const int64_t rows_first0 = numel(os) * 4 >= weight_bytes ? 1 : 0;
    const bool rows_first = knobs.define("rows_outer_nhwc", {rows_first0, 1 - rows_first0}) != 0;
    // Passes of k_block_nhwc input channels over a group of rows, as the blocked NCHW conv's
    // k_block (nn_conv2d.cpp, which says why and when): a tile's weights over all the channels
    // (ResNet-50's 3x3 256 conv: 295 KB) otherwise come from L2 for every tile. By default only
    // where a plane has 16 tiles or more to share a pass's weights: NHWC, a pixel's channels are
    // contiguous already, and the passes gain only that sharing. Kept NHWC on a Xeon (48 KB L1,
    // 2 threads): ResNet-50's 3x3 convs on 14x14 and larger planes 1.1-1.4x faster in passes
    // (its 3x3 256 conv 1.03 -> 0.77 ms a call); MobileNetV2's 1x1 convs on 7x7 planes (7
    // tiles) 1.07-1.19x slower, on 14x14 (28 tiles) 1.08x faster.
    const int64_t C = pw->reduce_axes().at(0).extent, taps = weight_bytes / (O * 4 * C);
    const int64_t tap_bytes = taps * tv * L * 4, tiles = os[2] * ((OW + tp - 1) / tp);
    const int64_t kc_l1 = std::max<int64_t>(1, std::min(C, g.target->l1d_bytes / 2 / tap_bytes));
    const int64_t kc_block = block_divisor(C, kc_l1, kChannelsBlock);
    const bool passes = R >= 32 && tiles >= 16 && C * tap_bytes > g.target->l1d_bytes / 2 && (taps > 1 || !rows_first);
    const int64_t kc = knobs.define("k_block_nhwc", distinct({passes ? kc_block : C, passes ? C : kc_block}));
    const int64_t per_group = kc < C ? rows_per_group(os[2], OW * tv * L * 4, os[0] * (O / (tv * L)), *g.target) : 1;
    auto [hg, hgi] = out.split(oh, per_group);
    auto [wb, wi] = out.split(ow, tp);
    auto [ob, oi] = out.split(ch, tv * L);
    const te::Axis first = rows_first ? hg : ob, second = rows_first ? ob : hg;
    if (stored) {
      auto [oio, oii] = out.split(oi, L);
      out.reorder({n, first, second, hgi, wb, wi, oio, oii});
      out.vectorize(oii);
    } else {
      out.reorder({n, first, second, hgi, wb, oi, wi});
    }
    // ... and the row's tiles where they divide it (no tail piece to guard).
    te::Axis par = out.fuse(out.fuse(n, first), second);
    const bool tiles_parallel = kc == C && OW % tp == 0;
    if (tiles_parallel) par = out.fuse(out.fuse(par, hgi), wb);
    out.parallel(par);
    te::Stage& y = *s.find(pw.get());
    y.compute_at(out, kc < C || tiles_parallel ? par : wb);
    auto [yo, yi] = y.split(y.axis(3), L);
    const te::Axis rc = y.reduce_axis(0), rh = y.reduce_axis(1), rw = y.reduce_axis(2);
    if (kc < C) {
      // The group's rows in register tiles inside each pass, the pass's channels in blocks of a
      // line outside the taps (see below).
      auto [ywo, ywi] = y.split(y.axis(2), tp);
      auto [rco, rcp] = y.split(rc, kc);
      const int64_t cb = kc % kChannelsBlock == 0 ? kChannelsBlock : kc;
      auto [rcpo, rcpi] = y.split(rcp, cb);
      y.reorder({rco, y.axis(1), ywo, rcpo, rh, rw, rcpi, ywi, yo, yi});
      y.unroll(ywi);
      y.unroll(yo);
      y.vectorize(yi);
      return;
    }
    // The input channels outermost, the taps inside: per channel, the tile's window of input
    // pixels. Kept NHWC, those pixels are a line each, C floats apart; with C a power of two
    // they fall into few L1 sets, and the window (3 rows x 15 pixels on a 3x3 stride-2 conv)
    // evicted itself channel after channel: ResNet-50's 3x3 stride-2 512 conv took 1.8 ms kept
    // against 0.68 plain (2 threads). There the channels go in blocks of a line outside the
    // taps (0.57 ms kept): each line read is then used for 16 channels. Plain NCHW, a channel's
    // window is a few lines and the channels outermost stay (blocks were up to 20% slower).
    const NhwcConv c = g.anchor ? nhwc_conv(*g.anchor) : NhwcConv{};
    bool blocks = false;
    if (c.KH * c.KW > 1 && c.C > kChannelsBlock && c.C % kChannelsBlock == 0) {
      const bool kept_in = static_cast<bool>(find_stage(anchor, "nchw_view"));
      const int64_t rows = std::min(c.H, (c.KH - 1) * c.dh + 1),
                    cols = std::min(c.W, (std::min(tp, OW) - 1) * c.sw + (c.KW - 1) * c.dw + 1);
      // Not a knob: a record's knobs, tuned alone (plain), are also what runs kept.
      blocks = kept_in ? window_thrashes_l1(rows, cols, c.W * c.C * 4, c.C * 4, *g.target)
                       : window_thrashes_l1(rows, cols, c.W * 4, 4, *g.target);
    }
    if (blocks) {
      auto [rco, rci] = y.split(rc, kChannelsBlock);
      y.reorder({rco, rh, rw, rci, y.axis(2), yo, yi});
    } else {
      y.reorder({rc, rh, rw, y.axis(2), yo, yi});
    }
    y.unroll(y.axis(2));
    y.unroll(yo);
    y.vectorize(yi);
    return;
  }
  // Depthwise: a piece of an output row, one vector of channels, the taps accumulated in
  // registers (tile_width accumulators; each tap one weight vector and a load per pixel).
  const int64_t tw0 = largest_divisor(OW, std::min<int64_t>(R - 4, 14));
  const int64_t tw = knobs.define("tile_width_nhwc", distinct({tw0, largest_divisor(OW, 8), largest_divisor(OW, 4)}));
  auto [cb, ci] = out.split(ch, L);
  auto [wb, wi] = out.split(ow, tw);
  out.reorder({n, oh, cb, wb, wi, ci});
  te::Axis par = out.fuse(out.fuse(n, oh), cb);
  out.parallel(par);
  if (stored) out.vectorize(ci);
  te::Stage& y = *s.find(dw.get());
  y.compute_at(out, wb);
  y.reorder({y.reduce_axis(0), y.reduce_axis(1), y.axis(2), y.axis(3)});
  y.unroll(y.reduce_axis(0));
  y.unroll(y.reduce_axis(1));
  y.unroll(y.axis(2));
  y.vectorize(y.axis(3));
  if (wt) {
    te::Stage& w = *s.find(wt.get());
    w.vectorize(w.axis(2));
  }
}

// The call of the function's conv2d anchor (the function's only conv2d).
const ir::CallNode* conv_of(const ir::FunctionNode& fn) {
  const ir::CallNode* conv = nullptr;
  for (const ir::Expr& e : ir::post_order(fn.body))
    if (auto* c = e->as<ir::CallNode>(); c && c->is_op() && c->op == ops::OpCode::Conv2d) {
      if (conv) return nullptr;
      conv = c;
    }
  return conv;
}

// What conv2d.nhwc can keep in nhwc: its data and every other activation-shaped tensor of the
// group, each read through its own view, and its result.
KeptLayoutSupport nhwc_layouts(const ir::FunctionNode& fn, const target::Target& t) {
  KeptLayoutSupport s;
  const ir::CallNode* conv = conv_of(fn);
  if (!conv || !why_not_nhwc(*conv, t).empty() || !ir::is_tensor(fn.body->type)) return s;
  // The result: the conv's, or a tensor it scales (squeeze-and-excitation: a 1x1 conv of the
  // pooled channels, its sigmoid times the larger tensor).
  const Shape& y = ir::as_tensor(fn.body->type).shape;
  const Shape& co = out_shape(*conv);
  const bool scales = co[2] * co[3] == 1 && y.size() == 4 && y[0] == co[0] && y[1] == co[1];
  if (y != co && !scales) return s;
  s.layout = kNhwcLayout;
  s.result = true;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::Expr& p = fn.params[i];
    bool weight = false;
    for (size_t a = 1; a < conv->args.size(); ++a) weight |= conv->args[a].get() == p.get();
    if (weight || !ir::is_tensor(p->type)) continue;
    const Shape& ps = ir::as_tensor(p->type).shape;
    // The data, a residual added, or a tensor an op before the conv reads (EfficientNet's
    // squeeze-and-excitation scales the depthwise conv's result on its way in).
    if (p.get() == conv->args[0].get() || ps == y || ps == ir::as_tensor(conv->args[0]->type).shape)
      s.params.push_back(static_cast<int>(i));
  }
  return s;
}

}  // namespace

int64_t nhwc_lanes(int64_t channels, const target::Target& t) {
  const int64_t L = t.vector_lanes();
  return channels % L == 0 ? L : L > 8 && channels % 8 == 0 ? 8 : 0;
}

void register_conv_nhwc(Registry& r) {
  OpImpl i;
  i.name = "conv2d.nhwc";
  i.compute = conv2d_nhwc;
  i.schedule = schedule_nhwc;
  i.why_not = why_not_nhwc;
  // Last by priority: alone (plain in, plain out) the NCHW implementations are faster.
  i.priority = [](const ir::CallNode&, const target::Target&) { return 1; };
  i.kept_layouts = nhwc_layouts;
  i.chain_role = [](const ir::FunctionNode& fn, const target::Target& t) {
    const ir::CallNode* conv = conv_of(fn);
    if (!conv || nhwc_layouts(fn, t).layout.empty()) return ChainRole::None;
    const NhwcConv g = nhwc_conv(*conv);
    if (g.depthwise) return ChainRole::Links;
    // A KxK window over few channels: the NCHW implementations run it at half to four fifths of
    // this one kept (sy_nn_bench's YOLO-style cases on Zen 4: 16->32 channels 3x3/2 on 128x128
    // 0.38 -> 0.21 ms on 2 threads); with 8 lanes (AVX2) it was as often slower, and 1x1 convs
    // (flat) are not slower in NCHW.
    const bool few = g.C <= 64 && g.O <= 64 && g.KH * g.KW > 1 && t.vector_lanes() >= 16;
    return few ? ChainRole::Pairs : ChainRole::Joins;
  };
  r.add(ops::OpCode::Conv2d, std::move(i));
}

}  // namespace sy::topi::nn
