// `compile --explain`: for every native kernel, the implementations that applied (with their
// priority and, from records, their measured cost), the one chosen and why, and why the others
// did not apply.
#pragma once
#include <ostream>

#include "native/compile.h"

namespace sy::cli {

void print_kernel_choices(std::ostream& os, const native::Compiled& nc);

}  // namespace sy::cli
