// The FLOPs of one op call: how much work an op means, for reports, the tuner's GFLOP/s and
// placement's per-node costs.
#pragma once
#include <cstdint>

#include "ir/expr.h"

namespace sy::ops {

// FLOPs (a multiply-add counts 2; "elements" are output elements unless stated):
//   nn.conv2d            2 * N * Cout * Hout * Wout * (Cin / groups) * Kh * Kw (bias not counted)
//   nn.conv2d_transpose  2 * N * Cin * Hin * Win * (Cout / groups) * Kh * Kw
//   matmul, nn.dense     2 * (output elements) * K, i.e. 2*M*N*K per batch (bias not counted)
//   nn.batch_norm        2 per element (a scale and a shift once folded)
//   nn.layer_norm, nn.instance_norm  5 per element; nn.softmax, nn.log_softmax 3 per element;
//   nn.lrn               2 * size per element
//   pooling windows      (output elements) * Kh * Kw; global pools: input elements
//   reductions, argmax/argmin, topk, cumsum: input elements
//   elementwise and broadcasting ops (arithmetic, activations, comparisons, where, cast): 1 per
//   element; identity: 0
//   data movement (reshape, transpose, concat, split, slice, gather, pad, tile, ...): 0;
//   image.resize2d, image.grid_sample: 1 per element
int64_t op_flops(const ir::CallNode& call);

}  // namespace sy::ops
