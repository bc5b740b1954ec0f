// A convolution's layouts, decided once for the split and the lowering alike (they must agree:
// the split's pieces take and give the layouts the lowering then makes the primitive for).
#include <cstdlib>
#include <set>
#include <vector>

#include "backends/onednn_hook/onednn_hook.h"
#include "externs/onednn/onednn_externs.h"
#include "ir/visitor.h"
#include "ops/attrs.h"
#include "ops/flops.h"
#include "ops/op.h"
#include "support/error.h"
#include "support/tensor.h"

namespace sy::backends::onednn_hook {

namespace {

bool reference(const std::string& impl) { return impl.empty() || impl.rfind("ref", 0) == 0; }

// Whether oneDNN has a kernel (not its reference loop) for the pair of layouts (the probe is
// cached per convolution's shape by conv2d_implementation).
bool has_kernel_for(const ir::CallNode& conv, int64_t src_block, int64_t dst_block) {
  return !reference(externs::onednn::conv2d_implementation(conv, src_block, dst_block));
}

bool has_kernel_for(const ir::CallNode& conv, ConvLayouts c, const Layout& L) {
  const int64_t b = L.nhwc ? externs::onednn::kNhwcBlock : L.lanes;
  return has_kernel_for(conv, c.src ? b : 0, c.dst ? b : 0);
}

}  // namespace

Layout layout_for(const target::Target& target, const ir::FunctionNode* region) {
  Layout L;
  L.lanes = target.vector_lanes();
  if (!region) return L;
  if (auto a = region->attrs.find(kLayoutAttr); a != region->attrs.end()) {
    L.nhwc = a->second == "nhwc";
    return L;
  }
  if (const char* forced = std::getenv("SWITCHYARD_ONEDNN_HOOK_LAYOUT"); forced && *forced) {
    const std::string f = forced;
    if (f != "nhwc" && f != "blocked")
      throw Error("SWITCHYARD_ONEDNN_HOOK_LAYOUT=" + f + ": expected nhwc or blocked");
    L.nhwc = f == "nhwc";
    return L;
  }
  // oneDNN's brgemm convolutions need avx512_core: AVX-512 F, BW, VL and DQ.
  if (!(target.has("avx512f") && target.has("avx512bw") && target.has("avx512vl") && target.has("avx512dq"))) return L;
  // The convolutions' work, and the bytes of the activations that cross the region's edge (what
  // its reorders move): each composite's data (and added tensor) where it is a parameter of the
  // region, and the results.
  double flops = 0, edge_bytes = 0;
  auto bytes = [](const ir::Expr& e) { return 4.0 * static_cast<double>(shape_numel(ir::shape_of(e))); };
  std::set<const ir::ExprNode*> counted;
  auto edge = [&](const ir::Expr& e) {
    if (e->kind == ir::ExprKind::Var && counted.insert(e.get()).second) edge_bytes += bytes(e);
  };
  std::vector<ir::Expr> results{region->body};
  if (auto* t = region->body->as<ir::TupleNode>()) results = t->fields;
  for (const ir::Expr& r : results)
    if (ir::is_tensor(r->type)) edge_bytes += bytes(r);
  for (const ir::Expr& e : ir::post_order(region->body)) {
    auto* c = e->as<ir::CallNode>();
    const auto* comp = c && c->callee ? c->callee->as<ir::FunctionNode>() : nullptr;
    if (!comp) continue;
    const Chain ch = chain_of(comp->body);
    if (!ch.anchor) continue;
    // The composite's parameter -> the region's value it is called with.
    auto outer = [&](const ir::Expr& inner) -> ir::Expr {
      for (size_t i = 0; i < comp->params.size(); ++i)
        if (comp->params[i].get() == inner.get()) return c->args[i];
      return inner;
    };
    if (ch.anchor->op == ops::OpCode::Conv2d) {
      const auto& a = ch.anchor->attrs_as<ops::Conv2dAttrs>();
      if (a.groups > 1) return L;  // depthwise: faster blocked (EfficientNet-B0, above)
      flops += static_cast<double>(ops::op_flops(*ch.anchor));
      edge(outer(ch.anchor->args[0]));
      if (ch.add) edge(outer(ch.other));
    } else if (composite_of(*c) == "onednn_hook.pool") {
      edge(outer(ch.anchor->args[0]));
    }
  }
  L.nhwc = flops >= kNhwcFlopsPerEdgeByte * edge_bytes;
  return L;
}

ConvLayouts conv_layouts(const ir::CallNode& conv, const Layout& L) {
  const bool src_ok = L.fits(ir::shape_of(conv.args[0])[1]);
  const bool dst_ok = L.fits(ir::as_tensor(conv.type).shape[1]);
  // Blocked where the channels allow: the stem's 3 NCHW channels into a blocked result is one of
  // oneDNN's JIT kernels, a 24-channel NCHW data into a blocked result is not.
  const ConvLayouts preferred{src_ok, dst_ok};
  for (ConvLayouts c : {preferred, ConvLayouts{true, true}, ConvLayouts{false, false}}) {
    if ((c.src && !src_ok) || (c.dst && !dst_ok)) continue;
    if (has_kernel_for(conv, c, L)) return c;
  }
  return {false, false};  // oneDNN's reference loop whatever the layouts: the rules decline it
}

bool conv_has_kernel(const ir::CallNode& conv, const Layout& L) { return has_kernel_for(conv, conv_layouts(conv, L), L); }

}  // namespace sy::backends::onednn_hook
