// `compile --explain`: for every native kernel, the implementations that applied (with their
// priority and, from records, their measured cost), the one chosen and why, and why the others
// did not apply.
#pragma once
#include <ostream>

#include "native/compile.h"

namespace sy::cli {

void print_kernel_choices(std::ostream& os, const native::Compiled& nc);
// The same from a plan alone (partition --explain: the choices without records; no knob values,
// since nothing is lowered).
void print_kernel_choices(std::ostream& os, const native::Plan& p, const std::vector<strategy::Choice>& choices,
                          const target::Target& t);
// The plan and the strategy's default choices for the native part of a partitioned module.
void print_default_choices(std::ostream& os, const ir::Module& partitioned, const target::Target& t);

}  // namespace sy::cli
