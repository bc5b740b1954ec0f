// Registration of the transform op implementations: index functions (transform.cpp) and the
// extern stages of cumsum and the scatters (transform_extern.cpp), plus the extern C functions
// every family's extern stages call (extern_kernels.cpp).
#include "topi/extern_kernels.h"
#include "topi/topi.h"
#include "topi/transform.h"

namespace sy::topi {

void register_transform(Registry& r) {
  register_transform_computes(r);
  register_transform_externs(r);
  register_extern_kernels(r);
}

}  // namespace sy::topi
