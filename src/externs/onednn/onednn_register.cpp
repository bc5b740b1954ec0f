// Registration of the oneDNN extern implementations.
#include "externs/onednn/onednn_externs.h"

#include "externs/onednn/onednn_extern_util.h"

namespace sy::externs {

namespace onednn {
std::string library_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}
}  // namespace onednn

void register_onednn_externs() {
  onednn::register_conv2d();
  onednn::register_matmul();
}

}  // namespace sy::externs
