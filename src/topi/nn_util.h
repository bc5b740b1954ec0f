// Helpers shared by the nn op implementations (src/topi/nn_*.cpp): attribute and type access,
// index/constant builders and the lookup of named stages inside a fused group.
#pragma once
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ops/attrs.h"
#include "ops/op.h"
#include "support/error.h"
#include "te/schedule.h"
#include "te/tensor.h"
#include "topi/topi.h"

namespace sy::topi::nn {

using te::Expr;
using te::IterVar;
using te::Tensor;

inline const Shape& out_shape(const ir::CallNode& c) { return ir::as_tensor(c.type).shape; }
inline DType out_dtype(const ir::CallNode& c) { return ir::as_tensor(c.type).dtype; }
inline Expr idx(int64_t v) { return tir::int_imm(v); }
inline Expr fconst(DType t, double v) { return tir::const_of(t, v); }
inline Expr all_of(const std::vector<Expr>& conds) {
  Expr c;
  for (const Expr& e : conds) c = c ? tir::logical_and(c, e) : e;
  return c ? c : tir::int_imm(1, DType::boolean);
}
inline Expr clamp(Expr i, int64_t lo, int64_t hi) { return tir::min(tir::max(i, idx(lo)), idx(hi)); }
// f64 index arithmetic of the image ops (resize2d, grid_sample), in the reference's precision.
inline Expr f64(Expr i) { return tir::cast(DType::f64, i); }
inline Expr dconst(double v) { return tir::float_imm(v, DType::f64); }
inline Expr dcall(const char* f, Expr v) { return tir::call(f, DType::f64, {v}); }
inline bool is_float_dtype(DType t) { return t == DType::f32 || t == DType::f64; }
inline void require_float(const ir::CallNode& c, const Tensor& x) {
  if (!is_float_dtype(x.dtype()))
    throw Error(ops::op_name(c.op) + ": native implementation needs f32 or f64 data, got " +
                std::string(dtype_name(x.dtype())));
}
inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The compute stage named `name` that `root` reads, directly or through other computes; null if none.
te::Operation find_stage(const Tensor& root, const std::string& name);
// Every non-output compute stage of the group that is not in `keep` is inlined (none is a reduction).
// Returns false (and changes nothing) if some other stage is a reduction.
bool inline_all_but(GroupSchedule& g, const std::vector<te::Operation>& keep);
// Fuses the first n leading loops of a stage (n >= 1) and returns the fused axis.
te::Axis fuse_leading(te::Stage& st, size_t n);
// Loops (batch, row, channel, column) for a stage of shape (N, C, H, W); returns the fused
// (batch, row) axis, to run in parallel: each thread takes a band of rows of every channel. Where
// the kernels before and after split a plane by rows, a kernel that split it by channels read half
// of its input from, and wrote half of its output for, the other core. With the two cores on
// separate L3 caches (two CCDs), DenseNet-121's concatenations took 2.4x their 1-thread time so.
te::Axis rows_parallel(te::Stage& st);
// Whether a plane split by rows (rows_parallel) keeps every core busy: one batch of (1, C, H, W)
// with at least a row per core (a plane one row high would run on one thread).
bool rows_split_fits(const Shape& shape, int cores);
// A reduction over a flattened padded grid (conv2d.depthwise_plane, the plane pools): `grid`
// (its last axis the flattened plane, two reduce axes: the window's rows and columns) and its
// padded input `pad` (last axis a padded row) computed at `at`, a block of the output's rows;
// the grid one vector at a time with the taps unrolled inside (the vector stays in a register),
// the padded rows copied in vectors.
void schedule_grid_at(te::Schedule& s, te::Stage& out, const te::Axis& at, const te::Operation& grid,
                      const te::Operation& pad, int64_t lanes);
// The lanes of a vector of channels in the native NHWC kernels (conv2d.nhwc, the NHWC pool):
// the target's vector, or 8 (an AVX-512 machine running 256-bit vectors) for channel counts
// that are whole 8-lane vectors only (MobileNet's 24, 40); 0 for neither.
int64_t nhwc_lanes(int64_t channels, const target::Target& t);
// Largest divisor of n that is <= cap (1 if none).
int64_t largest_divisor(int64_t n, int64_t cap);
// The largest divisor of n that is a multiple of `block` and at most cap (at least one block);
// n itself when no multiple of the block divides it.
int64_t block_divisor(int64_t n, int64_t cap, int64_t block);
// The largest divisor of n that is <= cap and cuts n into pieces whose count times `units` the
// cores share evenly; largest_divisor(n, cap) if none does.
int64_t balanced_divisor(int64_t n, int64_t cap, int64_t units, int cores);
// Rows (of `rows`, each `row_bytes` of a pass's buffer) in a group of a conv in passes of input
// channels: the group's buffer at most a quarter of L2, groups x `units` (images x channel
// tiles) at least two per core and, where a divisor of the rows allows, a multiple of the cores.
int64_t rows_per_group(int64_t rows, int64_t row_bytes, int64_t units, const target::Target& t);
// Knob candidates derived from the target: the positive values of `v` in order, each once (the
// first is the default).
std::vector<int64_t> distinct(const std::vector<int64_t>& v);

// Registration per op family.
void register_conv(Registry& r);
void register_conv_nhwc(Registry& r);
void register_concat_nhwc(Registry& r);
void register_dense(Registry& r);
void register_pool(Registry& r);
void register_norm(Registry& r);
void register_misc(Registry& r);
void register_grid_sample(Registry& r);

}  // namespace sy::topi::nn
