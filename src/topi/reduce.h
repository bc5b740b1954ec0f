// The reduce family's computes (reduce.cpp), registered by register_reduce.
#pragma once

namespace sy::topi {

struct Registry;

void register_reduce_computes(Registry& r);

}  // namespace sy::topi
