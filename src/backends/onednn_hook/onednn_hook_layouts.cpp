// A convolution's layouts, decided once for the split and the lowering alike (they must agree:
// the split's pieces take and give the layouts the lowering then makes the primitive for).
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "backends/onednn_hook/onednn_hook.h"
#include "externs/onednn/onednn_externs.h"
#include "ops/attrs.h"
#include "support/tensor.h"

namespace sy::backends::onednn_hook {

namespace {

bool reference(const std::string& impl) { return impl.empty() || impl.rfind("ref", 0) == 0; }

// Whether oneDNN has a kernel (not its reference loop) for the pair of layouts. Probing makes a
// primitive descriptor (a few ms for some): once per convolution's shape.
bool has_kernel_for(const ir::CallNode& conv, bool src, bool dst, int64_t B) {
  static std::mutex mu;
  static std::map<std::tuple<std::vector<int64_t>, bool, bool, int64_t>, bool> known;
  const auto& a = conv.attrs_as<ops::Conv2dAttrs>();
  std::vector<int64_t> key = ir::shape_of(conv.args[0]);
  for (const Shape& s : {ir::shape_of(conv.args[1]), ir::as_tensor(conv.type).shape, a.strides, a.padding, a.dilation})
    key.insert(key.end(), s.begin(), s.end());
  key.push_back(a.groups);
  std::lock_guard<std::mutex> lock(mu);
  auto k = std::make_tuple(key, src, dst, B);
  auto it = known.find(k);
  if (it != known.end()) return it->second;
  return known[k] = !reference(externs::onednn::conv2d_implementation(conv, src ? B : 0, dst ? B : 0));
}

}  // namespace

ConvLayouts conv_layouts(const ir::CallNode& conv, int64_t B) {
  const bool src_ok = B > 1 && ir::shape_of(conv.args[0])[1] % B == 0;
  const bool dst_ok = B > 1 && ir::as_tensor(conv.type).shape[1] % B == 0;
  // Blocked where the channels allow: the stem's 3 NCHW channels into a blocked result is one of
  // oneDNN's JIT kernels, a 24-channel NCHW data into a blocked result is not.
  const ConvLayouts preferred{src_ok, dst_ok};
  for (ConvLayouts c : {preferred, ConvLayouts{true, true}, ConvLayouts{false, false}}) {
    if ((c.src && !src_ok) || (c.dst && !dst_ok)) continue;
    if (has_kernel_for(conv, c.src, c.dst, B)) return c;
  }
  return {false, false};  // oneDNN's reference loop whatever the layouts: the rules decline it
}

bool conv_has_kernel(const ir::CallNode& conv, int64_t B) {
  const ConvLayouts c = conv_layouts(conv, B);
  return has_kernel_for(conv, c.src, c.dst, B);
}

}  // namespace sy::backends::onednn_hook
