// Registration of the elementwise op implementations: unary (elementwise_unary.cpp), binary with
// broadcasting and where (elementwise_binary.cpp). All use the default injective schedule.
#include "topi/elementwise.h"
#include "topi/topi.h"

namespace sy::topi {

void register_elementwise(Registry& r) {
  register_unary(r);
  register_binary(r);
}

}  // namespace sy::topi
