// Registration helpers of the transform family (register_transform.cpp calls them).
#pragma once

namespace sy::topi {

struct Registry;

// Index-function transforms (transform.cpp).
void register_transform_computes(Registry& r);
// cumsum, scatter_elements, scatter_nd as extern stages (transform_extern.cpp).
void register_transform_externs(Registry& r);

}  // namespace sy::topi
